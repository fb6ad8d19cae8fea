/**
 * Spring Boot 3.5 auto-configuration for the synchronizers, beside
 * {@link dev.synchronizers.spring.boot.SynchronizersAutoConfiguration} (which makes the client, the
 * metrics and the ShedLock and Spring Integration beans on Boot 3.5 as on Boot 4):
 * {@link dev.synchronizers.spring.boot3.SynchronizersBoot3AutoConfiguration} adds the parts whose
 * Spring Boot types changed in Boot 4, the health indicator named {@code synchronizers} and the
 * fallback to Boot 3's Redis connection details. See the project's {@code docs/spring-boot.md}.
 */
package dev.synchronizers.spring.boot3;
