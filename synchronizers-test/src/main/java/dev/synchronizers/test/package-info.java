/**
 * {@link dev.synchronizers.test.InMemorySynchronizers}: every synchronizer of the API in one JVM, with
 * this library's semantics and hooks to lose a hold or make the store unavailable, for users' unit tests.
 */
package dev.synchronizers.test;
