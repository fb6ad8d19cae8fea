package dev.synchronizers.redis.topology;

import java.time.Duration;

/**
 * Says why a connection could not be made, for the message of the exception a client's build
 * throws: a password the server refused ({@code WRONGPASS}) or one it requires and did not get
 * ({@code NOAUTH}) is named first, wherever Lettuce put the server's reply in the cause chain, and
 * so is a failed TLS handshake (a certificate not trusted);
 * anything else is the connect failure as Lettuce reported it. Never includes credentials (the
 * server's replies do not repeat them).
 */
public final class ConnectFailure {

    private ConnectFailure() {
    }

    /**
     * Returns the text that follows "cannot connect to <server>" in a message.
     *
     * @param failure what the connect attempt threw
     * @param timeout the command timeout the attempt was bounded by
     * @return e.g. {@code ": the server refused the password (WRONGPASS ...)"} or
     *     {@code " within 5000 ms: Unable to connect to ..."}
     */
    public static String describe(Throwable failure, Duration timeout) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage();
            if (message == null) {
                continue;
            }
            if (message.startsWith("WRONGPASS")) {
                return ": the server refused the username or password (" + message + ")";
            }
            if (message.startsWith("NOAUTH")) {
                return ": the server requires a password and none was given (" + message + ")";
            }
            if (cause instanceof javax.net.ssl.SSLException) {
                return ": the TLS handshake failed (" + message + "); is the server's certificate trusted"
                        + " (the builder's sslOptions, or the JVM's trust store)?";
            }
        }
        return " within " + timeout.toMillis() + " ms: " + failure.getMessage();
    }
}
