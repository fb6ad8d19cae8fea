/**
 * Spring Boot auto-configuration for the synchronizers:
 * {@link dev.synchronizers.spring.boot.SynchronizersAutoConfiguration} makes one client from the
 * {@code synchronizers.*} properties ({@link dev.synchronizers.spring.boot.SynchronizersProperties}),
 * a health indicator named {@code synchronizers}, and a ShedLock {@code LockProvider} when ShedLock
 * is on the class path. See the project's {@code docs/spring-boot.md}.
 */
package dev.synchronizers.spring.boot;
