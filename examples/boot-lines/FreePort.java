import java.net.InetAddress;
import java.net.ServerSocket;

/** Prints a loopback port that nothing listened on a moment ago (the kernel's pick), for check.sh. */
public class FreePort {
    public static void main(String[] args) throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            System.out.println(socket.getLocalPort());
        }
    }
}
