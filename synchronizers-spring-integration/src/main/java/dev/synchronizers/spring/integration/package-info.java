/**
 * A <a href="https://spring.io/projects/spring-integration">Spring Integration</a> lock registry
 * over the synchronizers' locks: {@link dev.synchronizers.spring.integration.SynchronizersLockRegistry},
 * for {@code LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice} and everything else that
 * takes a {@code LockRegistry}.
 *
 * <pre> {@code
 * @Bean
 * SynchronizersLockRegistry lockRegistry(Synchronizers synchronizers) {
 *     return new SynchronizersLockRegistry(synchronizers);
 * }}</pre>
 */
package dev.synchronizers.spring.integration;
