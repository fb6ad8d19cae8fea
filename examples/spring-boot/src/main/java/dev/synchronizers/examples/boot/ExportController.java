package dev.synchronizers.examples.boot;

import dev.synchronizers.DistributedSemaphore;
import dev.synchronizers.PermitHandle;
import dev.synchronizers.SynchronizerUnavailableException;
import dev.synchronizers.Synchronizers;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /exports/{id}}: an expensive export that the database behind it can afford only
 * {@code example.exports.permits} times at once, across every instance. Each request waits up to
 * {@code example.exports.wait} for a permit of the {@link DistributedSemaphore} {@code "exports"}
 * and answers 429 if none came free; the permit is a handle released when the export is done, and
 * leased like a lock, so an instance that dies mid-export does not leak it.
 *
 * <p>Nothing here calls Redis before the first request, so the application starts while Redis is
 * down ({@code synchronizers.fail-fast=false}); a request that finds Redis unavailable ends in the
 * client's {@link SynchronizerUnavailableException}, which {@link RedisUnavailableAdvice} answers
 * with 503.
 */
@RestController
public class ExportController {

    private final Synchronizers synchronizers;
    private final int permits;
    private final Duration wait;
    private final Duration work;
    private volatile boolean totalSet;

    /**
     * Creates the controller; makes no call to Redis.
     *
     * @param synchronizers the starter's client
     * @param permits exports at once, across instances
     * @param wait how long a request waits for a permit
     * @param work how long one export takes, standing in for the real work
     */
    public ExportController(Synchronizers synchronizers, @Value("${example.exports.permits:2}") int permits,
            @Value("${example.exports.wait:PT1S}") Duration wait, @Value("${example.exports.work:PT0.2S}") Duration work) {
        this.synchronizers = synchronizers;
        this.permits = permits;
        this.wait = wait;
        this.work = work;
    }

    /**
     * Runs one export if a permit comes free in time.
     *
     * @param id what to export
     * @return 200 with the export, or 429 if every permit stayed taken for the whole wait
     * @throws InterruptedException if the request thread is interrupted while it waits or works
     * @throws SynchronizerUnavailableException if Redis does not answer (503, by {@link RedisUnavailableAdvice})
     */
    @GetMapping("/exports/{id}")
    public ResponseEntity<Map<String, Object>> export(@PathVariable("id") String id) throws InterruptedException {
        DistributedSemaphore exports = synchronizers.semaphore("exports");
        if (!totalSet) {
            // The fleet's total, set by the first request that reaches Redis; an instance that finds
            // it set keeps it.
            exports.trySetPermits(permits);
            totalSet = true;
        }
        Optional<PermitHandle> permit = exports.tryAcquirePermits(1, wait);
        if (permit.isEmpty()) {
            return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
                    .body(Map.of("id", id, "error", "all export permits are taken; try again later"));
        }
        PermitHandle held = permit.get();
        try {
            Thread.sleep(work.toMillis());   // the export itself
            return ResponseEntity.ok(Map.of("id", id, "exported", true));
        } finally {
            held.release();
        }
    }
}
