package dev.synchronizers.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority and a server certificate for {@code 127.0.0.1} (in its subject
 * alternative names, so that a client that checks the host name accepts it), generated for a test
 * with the {@code openssl} command line tool into a fresh directory, as PEM files: what
 * {@code redis-server --tls-cert-file/--tls-key-file/--tls-ca-cert-file} reads and what a client
 * trusts. Valid for one day.
 *
 * <pre>{@code
 * TlsCertificates tls = TlsCertificates.generate();
 * RedisServer server = RedisServers.start(tls.serverArgs(tlsPort));
 * }</pre>
 */
public final class TlsCertificates {

    private final Path dir;

    private TlsCertificates(Path dir) {
        this.dir = dir;
    }

    /**
     * Generates a CA and a server certificate signed by it, for {@code 127.0.0.1}.
     *
     * @return the files
     * @throws IllegalStateException if {@code openssl} is missing or fails
     */
    public static TlsCertificates generate() {
        try {
            Path dir = Files.createTempDirectory("synchronizers-tls-");
            TlsCertificates tls = new TlsCertificates(dir);
            Files.writeString(dir.resolve("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
                    StandardCharsets.US_ASCII);
            tls.openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                    "-days", "1", "-subj", "/CN=synchronizers test CA");
            tls.openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                    "-subj", "/CN=127.0.0.1");
            tls.openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", "server.crt", "-days", "1", "-extfile", "san.cnf");
            return tls;
        } catch (IOException e) {
            throw new IllegalStateException("cannot generate TLS certificates with openssl: " + e.getMessage(), e);
        }
    }

    /** The CA's certificate (PEM), which a client trusts. */
    public Path caCertificate() {
        return dir.resolve("ca.crt");
    }

    /** The server's certificate (PEM), signed by the CA. */
    public Path serverCertificate() {
        return dir.resolve("server.crt");
    }

    /** The server's private key (PEM, unencrypted). */
    public Path serverKey() {
        return dir.resolve("server.key");
    }

    /**
     * The {@code redis-server} arguments that serve TLS on {@code tlsPort} with these files, with
     * client certificates not required.
     *
     * @param tlsPort the port for TLS connections
     * @return the arguments, for {@link RedisServers#start(String...)}
     */
    public String[] serverArgs(int tlsPort) {
        return new String[] {"--tls-port", Integer.toString(tlsPort), "--tls-cert-file", serverCertificate().toString(),
            "--tls-key-file", serverKey().toString(), "--tls-ca-cert-file", caCertificate().toString(),
            "--tls-auth-clients", "no"};
    }

    private void openssl(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        try {
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            process.destroy();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while openssl ran", e);
        }
    }
}
