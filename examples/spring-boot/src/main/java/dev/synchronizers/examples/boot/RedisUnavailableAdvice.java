package dev.synchronizers.examples.boot;

import dev.synchronizers.SynchronizerUnavailableException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a request whose synchronizer call found Redis unavailable
 * ({@link SynchronizerUnavailableException}: down, unreachable, or not answering within the command
 * timeout) with 503 Service Unavailable and a {@code Retry-After}, rather than 500: the request may
 * succeed once Redis is back. The exception's message, which names the server, is logged, not sent
 * to the caller.
 */
@RestControllerAdvice
public class RedisUnavailableAdvice {

    private static final Logger log = LoggerFactory.getLogger(RedisUnavailableAdvice.class);

    /** Created by Spring. */
    public RedisUnavailableAdvice() {
    }

    /**
     * Maps the exception to 503.
     *
     * @param e what the client threw
     * @return 503 with {@code Retry-After: 5} and a short reason
     */
    @ExceptionHandler(SynchronizerUnavailableException.class)
    public ResponseEntity<Map<String, Object>> unavailable(SynchronizerUnavailableException e) {
        log.warn("answering 503: {}", e.getMessage());
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).header(HttpHeaders.RETRY_AFTER, "5")
                .body(Map.of("error", "Redis, which coordinates the instances, is unavailable; try again later"));
    }
}
