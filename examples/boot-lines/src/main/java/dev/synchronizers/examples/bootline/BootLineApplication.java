package dev.synchronizers.examples.bootline;

import dev.synchronizers.DistributedLock;
import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.Synchronizers;
import io.lettuce.core.RedisClient;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.core.SpringVersion;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The smallest Spring Boot application on the synchronizers starter, built once per Boot line
 * (examples/boot-lines/boot-3.5, boot-4.0, boot-4.1: the same code, each with that Boot as its parent
 * and Boot's managed versions of everything). It takes a lock at {@code GET /lock} and a permit at
 * {@code GET /permit}; Spring Boot's actuator serves {@code /actuator/health}, where the starter's
 * {@code synchronizers} indicator is listed. {@code check.sh} beside this tree starts it against a
 * redis-server and calls all three.
 */
@SpringBootApplication
@RestController
public class BootLineApplication {

    private final Synchronizers synchronizers;

    public BootLineApplication(Synchronizers synchronizers) {
        this.synchronizers = synchronizers;
    }

    public static void main(String[] args) {
        SpringApplication.run(BootLineApplication.class, args);
    }

    /** Which Boot, Spring and Lettuce this application runs on: what its parent manages. */
    @GetMapping("/versions")
    public String versions() {
        return "Spring Boot " + SpringBootVersion.getVersion() + ", Spring Framework " + SpringVersion.getVersion()
                + ", Lettuce " + RedisClient.class.getPackage().getImplementationVersion() + "\n";
    }

    /** Takes the lock {@code boot-line}, waiting up to 5 s, and releases it. */
    @GetMapping("/lock")
    public String lock() throws InterruptedException {
        DistributedLock lock = synchronizers.lock("boot-line");
        if (!lock.tryLock(5, TimeUnit.SECONDS)) {
            return "lock busy\n";
        }
        try {
            return "lock taken\n";
        } finally {
            lock.unlock();
        }
    }

    /** Takes a permit of the semaphore {@code boot-line} (one permit in all), waiting up to 5 s, and releases it. */
    @GetMapping("/permit")
    public String permit() throws InterruptedException {
        DistributedSemaphore permits = synchronizers.semaphore("boot-line");
        permits.trySetPermits(1);
        if (!permits.tryAcquire(5, TimeUnit.SECONDS)) {
            return "permit busy\n";
        }
        try {
            return "permit taken\n";
        } finally {
            permits.release();
        }
    }
}
