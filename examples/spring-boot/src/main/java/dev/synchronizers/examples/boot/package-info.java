/**
 * A Spring Boot application on the synchronizers starter: a scheduled job locked through ShedLock,
 * and an HTTP endpoint bounded by a distributed semaphore.
 */
package dev.synchronizers.examples.boot;
