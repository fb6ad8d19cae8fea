package dev.synchronizers.test;

/** One latch: its count and how often it reached zero. Guarded by the store's lock. */
final class LatchState {
    final String name;
    long count;
    long openings;

    LatchState(String name) {
        this.name = name;
    }
}
