package dev.synchronizers.redis.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.synchronizers.redis.script.SemaphoreReply.Outcome;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The typed replies decode every shape their scripts' headers declare, and refuse any other shape
 * with an {@link UnexpectedReplyException} that names the script. Integers arrive as {@link Long}
 * and strings as {@link String}, as Lettuce decodes a MULTI script reply. Needs no Redis.
 */
class RepliesDecodingTest {

    private static List<Object> reply(Object... elements) {
        return Arrays.asList(elements);
    }

    private static void assertUnexpected(Script script, Executable decode) {
        UnexpectedReplyException e = assertThrows(UnexpectedReplyException.class, decode);
        assertSame(script, e.script());
        assertTrue(e.getMessage().contains(script.file), e.getMessage());
    }

    /* --------------- AcquireReply --------------- */

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_ACQUIRE", "LOCK_ACQUIRE_WAITING", "FAIR_LOCK_ACQUIRE",
        "RW_READ_ACQUIRE", "RW_READ_TRY", "RW_WRITE_ACQUIRE", "RW_WRITE_TRY"})
    void acquire_acquired_carriesToken(Script script) {
        assertEquals(new AcquireReply(true, 1_700_000_000_000_123L, 0, -1),
                AcquireReply.of(script, reply(1L, 1_700_000_000_000_123L)));
    }

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_ACQUIRE", "RW_READ_ACQUIRE", "RW_READ_TRY", "RW_WRITE_ACQUIRE",
        "RW_WRITE_TRY"})
    void acquire_refused_carriesWaitWithoutFloor(Script script) {
        assertEquals(new AcquireReply(false, -1, 2500, -1), AcquireReply.of(script, reply(0L, 2500L)));
        assertEquals(new AcquireReply(false, -1, -1, -1), AcquireReply.of(script, reply(0L, -1L)));
    }

    @Test
    void acquire_fairQueued_carriesWaitAndFloor() {
        assertEquals(new AcquireReply(false, -1, 2500, 77),
                AcquireReply.of(Script.FAIR_LOCK_ACQUIRE, reply(0L, 2500L, 77L)));
        assertEquals(new AcquireReply(false, -1, -1, 77),
                AcquireReply.of(Script.FAIR_LOCK_ACQUIRE, reply(0L, -1L, 77L)));
    }

    @Test
    void acquire_fairQueuedWithoutFloor_isUnexpected() {
        assertUnexpected(Script.FAIR_LOCK_ACQUIRE, () -> AcquireReply.of(Script.FAIR_LOCK_ACQUIRE, reply(0L, 2500L)));
    }

    /** A try that meets another client's cache names that client (docs/design/lock-caching.md). */
    @Test
    void acquire_refusedByAnotherClientsCache_namesTheCacher() {
        Script script = Script.LOCK_ACQUIRE;
        assertEquals(new AcquireReply(false, -1, 2500, -1, "client-a"),
                AcquireReply.of(script, reply(0L, 2500L, "client-a")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, "")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, 7L, "client-a")));
    }

    /** A waiting try that is refused is put in line: it always names a cacher or '', and a floor. */
    @Test
    void acquire_waitingRefused_carriesWaitCacherAndFloor() {
        Script script = Script.LOCK_ACQUIRE_WAITING;
        assertEquals(new AcquireReply(false, -1, 2500, 77, ""), AcquireReply.of(script, reply(0L, 2500L, "", 77L)));
        assertEquals(new AcquireReply(false, -1, -1, 77, ""), AcquireReply.of(script, reply(0L, -1L, "", 77L)));
        assertEquals(new AcquireReply(false, -1, 2500, 77, "client-a"),
                AcquireReply.of(script, reply(0L, 2500L, "client-a", 77L)));
    }

    @Test
    void acquire_waitingBadShapes_areUnexpected() {
        Script script = Script.LOCK_ACQUIRE_WAITING;
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, "client-a")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, 77L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, "", "77")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, 5L, 77L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, 7L, "", 77L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, 7L, "")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(2L, 7L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(0L, 2500L, "", 77L, 1L)));
    }

    @Test
    void acquire_cacherFromAScriptThatNamesNone_isUnexpected() {
        assertUnexpected(Script.RW_WRITE_TRY, () -> AcquireReply.of(Script.RW_WRITE_TRY, reply(0L, 2500L, "client-a")));
        assertUnexpected(Script.FAIR_LOCK_ACQUIRE,
                () -> AcquireReply.of(Script.FAIR_LOCK_ACQUIRE, reply(0L, 2500L, "client-a")));
    }

    /* --------------- CacheBlockReply --------------- */

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_CACHE_ACQUIRE", "LOCK_CACHE_RESERVE"})
    void cacheBlock_granted_carriesTheBlockAndTheAsk(Script script) {
        assertEquals(new CacheBlockReply(true, 100, 199, false, 0, ""),
                CacheBlockReply.of(script, reply(1L, 100L, 199L, 0L)));
        assertEquals(new CacheBlockReply(true, 100, 100, true, 0, ""),
                CacheBlockReply.of(script, reply(1L, 100L, 100L, 1L)));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(1L, 100L, 99L, 0L)));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(1L, 100L, 199L, 2L)));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(1L, 100L, 199L)));
    }

    @Test
    void cacheBlock_takeRefused_carriesWaitAndCacher() {
        Script script = Script.LOCK_CACHE_ACQUIRE;
        assertEquals(new CacheBlockReply(false, -1, -1, false, 2500, ""), CacheBlockReply.of(script, reply(0L, 2500L)));
        assertEquals(new CacheBlockReply(false, -1, -1, false, -1, "client-a"),
                CacheBlockReply.of(script, reply(0L, -1L, "client-a")));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(0L, 0L, 0L, 0L)));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(0L, 2500L, "")));
    }

    @Test
    void cacheBlock_reserveRefused_isTheCacheGone() {
        Script script = Script.LOCK_CACHE_RESERVE;
        assertEquals(new CacheBlockReply(false, -1, -1, false, 0, ""), CacheBlockReply.of(script, reply(0L, 0L, 0L, 0L)));
        assertUnexpected(script, () -> CacheBlockReply.of(script, reply(0L, 2500L)));
        assertThrows(IllegalArgumentException.class, () -> CacheBlockReply.of(Script.LOCK_ACQUIRE, reply(1L, 1L)));
    }

    /* --------------- ForceReply --------------- */

    @Test
    void force_releasedOrNot_namesTheCacheItEnded() {
        Script script = Script.LOCK_FORCE_UNLOCK;
        assertEquals(new ForceReply(true, ""), ForceReply.of(script, reply(1L, "")));
        assertEquals(new ForceReply(true, "client-a"), ForceReply.of(script, reply(1L, "client-a")));
        assertEquals(new ForceReply(false, ""), ForceReply.of(script, reply(0L, "")));
        assertUnexpected(script, () -> ForceReply.of(script, reply(0L, "client-a")));
        assertUnexpected(script, () -> ForceReply.of(script, reply(1L)));
        assertThrows(IllegalArgumentException.class, () -> ForceReply.of(Script.RW_FORCE_UNLOCK, reply(1L, "")));
    }

    @Test
    void acquire_floorFromAScriptThatHasNone_isUnexpected() {
        assertUnexpected(Script.LOCK_ACQUIRE, () -> AcquireReply.of(Script.LOCK_ACQUIRE, reply(0L, 2500L, 77L)));
    }

    @Test
    void acquire_badShapes_areUnexpected() {
        Script script = Script.LOCK_ACQUIRE;
        assertUnexpected(script, () -> AcquireReply.of(script, reply()));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(2L, 5L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply("1", 5L)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, "5")));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, null)));
        assertUnexpected(script, () -> AcquireReply.of(script, reply(1L, 5L, 6L)));
        assertUnexpected(script, () -> AcquireReply.of(script, null));
        assertUnexpected(Script.FAIR_LOCK_ACQUIRE, () -> AcquireReply.of(Script.FAIR_LOCK_ACQUIRE, reply(1L, 5L, 6L)));
    }

    @Test
    void acquire_unexpected_messageShowsReplyAndShapes() {
        UnexpectedReplyException e = assertThrows(UnexpectedReplyException.class,
                () -> AcquireReply.of(Script.LOCK_ACQUIRE, reply(2L, "x")));
        assertEquals("unexpected reply from lock-acquire.lua: {2, 'x'}; expected {1, token}, {0, wait_ms}"
                + " or {0, wait_ms, client}",
                e.getMessage());
    }

    @Test
    void acquire_otherScript_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AcquireReply.of(Script.LOCK_RELEASE, reply(1L, 5L)));
        assertTrue(e.getMessage().contains("lock-release.lua"), e.getMessage());
    }

    /* --------------- ReleaseReply --------------- */

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_RELEASE", "FAIR_LOCK_RELEASE", "RW_READ_RELEASE",
        "RW_WRITE_RELEASE"})
    void release_releasedOrNotHeld_wakesNoOneByName(Script script) {
        ReleaseReply released = ReleaseReply.of(script, reply(1L, ""));
        assertEquals(new ReleaseReply(true, "", -1), released);
        assertFalse(released.handedOver());
        assertEquals(new ReleaseReply(false, "", -1), ReleaseReply.of(script, reply(0L, "")));
    }

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_RELEASE", "FAIR_LOCK_RELEASE"})
    void release_handedOver_carriesWaiterAndToken(Script script) {
        ReleaseReply released = ReleaseReply.of(script, reply(1L, "c:7:3", 1_700_000_000_000_123L));
        assertEquals(new ReleaseReply(true, "c:7:3", 1_700_000_000_000_123L), released);
        assertTrue(released.handedOver());
    }

    @Test
    void release_readWriteWoken_carriesWhomWithoutToken() {
        assertEquals(new ReleaseReply(true, "c:9", -1), ReleaseReply.of(Script.RW_READ_RELEASE, reply(1L, "c:9")));
        assertEquals(new ReleaseReply(true, "c:9", -1), ReleaseReply.of(Script.RW_WRITE_RELEASE, reply(1L, "c:9")));
        ReleaseReply readers = ReleaseReply.of(Script.RW_WRITE_RELEASE, reply(1L, "released"));
        assertEquals(new ReleaseReply(true, "released", -1), readers);
        assertFalse(readers.handedOver());
    }

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_RELEASE", "FAIR_LOCK_RELEASE"})
    void release_lineBadShapes_areUnexpected(Script script) {
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(1L, "c:9")));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(1L, 0L)));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(2L, "")));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(1L)));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(1L, "", 5L)));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(1L, "c:7", "5")));
        assertUnexpected(script, () -> ReleaseReply.of(script, reply(0L, "c:7", 5L)));
    }

    @Test
    void release_readWriteBadShapes_areUnexpected() {
        assertUnexpected(Script.RW_WRITE_RELEASE, () -> ReleaseReply.of(Script.RW_WRITE_RELEASE, reply(0L, "c:9")));
        assertUnexpected(Script.RW_WRITE_RELEASE, () -> ReleaseReply.of(Script.RW_WRITE_RELEASE, reply(1L, "c:9", 5L)));
    }

    /* --------------- HandoverReply --------------- */

    @Test
    void handover_handedOver_carriesTokenAndWaitingMark() {
        assertEquals(new HandoverReply(true, 42, true), HandoverReply.of(Script.LOCK_HANDOVER, reply(1L, 42L, 1L)));
        assertEquals(new HandoverReply(true, 42, false), HandoverReply.of(Script.LOCK_HANDOVER, reply(1L, 42L, 0L)));
    }

    @Test
    void handover_notHeld_changesNothing() {
        assertEquals(new HandoverReply(false, -1, false), HandoverReply.of(Script.LOCK_HANDOVER, reply(0L, 0L, 0L)));
    }

    @Test
    void handover_badShapes_areUnexpected() {
        Script script = Script.LOCK_HANDOVER;
        assertUnexpected(script, () -> HandoverReply.of(script, reply(0L, 42L, 0L)));
        assertUnexpected(script, () -> HandoverReply.of(script, reply(1L, 42L, 2L)));
        assertUnexpected(script, () -> HandoverReply.of(script, reply(1L, 42L)));
        assertUnexpected(script, () -> HandoverReply.of(script, reply(1L, "42", 1L)));
        assertUnexpected(script, () -> HandoverReply.of(script, reply(-1L, 0L, 0L)));
        assertThrows(IllegalArgumentException.class, () -> HandoverReply.of(Script.LOCK_RELEASE, reply(1L, 42L, 1L)));
    }

    /* --------------- SemaphoreReply --------------- */

    @Test
    void semaphoreAcquire_everyDeclaredShape() {
        Script script = Script.SEMAPHORE_ACQUIRE;
        assertEquals(new SemaphoreReply(Outcome.ACQUIRED, 3), SemaphoreReply.of(script, reply(1L, 3L)));
        assertEquals(new SemaphoreReply(Outcome.ACQUIRED, 0), SemaphoreReply.of(script, reply(1L, 0L)));
        assertEquals(new SemaphoreReply(Outcome.QUEUED, 250), SemaphoreReply.of(script, reply(0L, 250L)));
        assertEquals(new SemaphoreReply(Outcome.EXCEEDS_TOTAL, 5), SemaphoreReply.of(script, reply(-1L, 5L)));
        assertEquals(new SemaphoreReply(Outcome.GIVEN_UP, 0), SemaphoreReply.of(script, reply(-2L, 0L)));
    }

    @Test
    void semaphoreTry_everyDeclaredShape() {
        Script script = Script.SEMAPHORE_TRY;
        assertEquals(new SemaphoreReply(Outcome.ACQUIRED, 2), SemaphoreReply.of(script, reply(1L, 2L)));
        assertEquals(new SemaphoreReply(Outcome.ACQUIRED, 0), SemaphoreReply.of(script, reply(1L, 0L)));
        assertEquals(new SemaphoreReply(Outcome.QUEUED, 0), SemaphoreReply.of(script, reply(0L, 0L)));
        assertEquals(new SemaphoreReply(Outcome.EXCEEDS_TOTAL, 5), SemaphoreReply.of(script, reply(-1L, 5L)));
        assertEquals(new SemaphoreReply(Outcome.GIVEN_UP, 0), SemaphoreReply.of(script, reply(-2L, 0L)));
    }

    @Test
    void semaphoreOutcome_codesAreTheHeadersCodes() {
        assertEquals(1L, Outcome.ACQUIRED.code);
        assertEquals(0L, Outcome.QUEUED.code);
        assertEquals(-1L, Outcome.EXCEEDS_TOTAL.code);
        assertEquals(-2L, Outcome.GIVEN_UP.code);
    }

    @Test
    void semaphore_badShapes_areUnexpected() {
        Script acquire = Script.SEMAPHORE_ACQUIRE;
        Script tryOnce = Script.SEMAPHORE_TRY;
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(-3L, 0L)));
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(2L, 0L)));
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(-2L, 5L)));
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(1L)));
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(1L, 3L, 4L)));
        assertUnexpected(acquire, () -> SemaphoreReply.of(acquire, reply(1L, "3")));
        assertUnexpected(tryOnce, () -> SemaphoreReply.of(tryOnce, reply(0L, 250L)));
        assertUnexpected(tryOnce, () -> SemaphoreReply.of(tryOnce, reply("-1", 5L)));
        assertThrows(IllegalArgumentException.class, () -> SemaphoreReply.of(Script.SEMAPHORE_ADD, reply(1L, 3L)));
    }

    /* --------------- SemaphoreAddReply --------------- */

    @Test
    void semaphoreAdd_everyDeclaredShape() {
        assertEquals(new SemaphoreAddReply(true, 7), SemaphoreAddReply.of(Script.SEMAPHORE_ADD, reply(1L, 7L)));
        assertEquals(new SemaphoreAddReply(false, 2), SemaphoreAddReply.of(Script.SEMAPHORE_ADD, reply(0L, 2L)));
    }

    @Test
    void semaphoreAdd_badShapes_areUnexpected() {
        Script script = Script.SEMAPHORE_ADD;
        assertUnexpected(script, () -> SemaphoreAddReply.of(script, reply(-1L, 2L)));
        assertUnexpected(script, () -> SemaphoreAddReply.of(script, reply(1L)));
        assertUnexpected(script, () -> SemaphoreAddReply.of(script, reply(1L, "7")));
        assertThrows(IllegalArgumentException.class, () -> SemaphoreAddReply.of(Script.SEMAPHORE_TRY, reply(1L, 7L)));
    }

    /* --------------- LockPicture --------------- */

    @Test
    void lockPicture_holdersAndWaiting() {
        LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT,
                reply(2500L, 3L, reply("c1:7", "41"), reply("c2", 2L, "c3", 1L)));
        assertEquals(new LockPicture(2500, 3, List.of(new LockPicture.Holder("c1:7", 41)),
                List.of(new LockPicture.Waiting("c2", 2), new LockPicture.Waiting("c3", 1))), picture);
    }

    @Test
    void lockPicture_noHold() {
        assertEquals(new LockPicture(-2, 0, List.of(), List.of()),
                LockPicture.of(Script.LOCK_SNAPSHOT, reply(-2L, 0L, reply(), reply())));
    }

    @Test
    void lockPicture_isImmutable() {
        LockPicture picture = LockPicture.of(Script.LOCK_SNAPSHOT, reply(-1L, 0L, reply("c1:7", "41"), reply()));
        assertThrows(UnsupportedOperationException.class, () -> picture.holders().clear());
    }

    @Test
    void lockPicture_badShapes_areUnexpected() {
        Script script = Script.LOCK_SNAPSHOT;
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, reply())));
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, reply("c1:7"), reply())));
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, reply("c1:7", "x"), reply())));
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, reply(7L, "41"), reply())));
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, reply(), reply("c2", "2"))));
        assertUnexpected(script, () -> LockPicture.of(script, reply(-2L, 0L, "", reply())));
        assertUnexpected(script, () -> LockPicture.of(script, reply("-2", 0L, reply(), reply())));
    }

    /* --------------- ReadWriteLockPicture --------------- */

    @Test
    void readWritePicture_writerMarksReadersAndWaiters() {
        ReadWriteLockPicture picture = ReadWriteLockPicture.of(Script.RW_SNAPSHOT, reply(900L, 2L, 1L,
                reply(":count", "1", "c1:7", "41"), reply("c2:3", "42", 800L, "c3:4", "-1", 700L)));
        assertEquals(new ReadWriteLockPicture(900, 2, true, List.of(new ReadWriteLockPicture.Writer("c1:7", 41)),
                List.of(new ReadWriteLockPicture.Reader("c2:3", 42, 800), new ReadWriteLockPicture.Reader("c3:4", -1, 700))),
                picture);
    }

    @Test
    void readWritePicture_nothingHeld() {
        assertEquals(new ReadWriteLockPicture(-2, 0, false, List.of(), List.of()),
                ReadWriteLockPicture.of(Script.RW_SNAPSHOT, reply(-2L, 0L, 0L, reply(), reply())));
    }

    @Test
    void readWritePicture_badShapes_areUnexpected() {
        Script script = Script.RW_SNAPSHOT;
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 2L, reply(), reply())));
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 0L, reply())));
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 0L, reply("c1:7"), reply())));
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 0L, reply(), reply("c2:3", "42"))));
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 0L, reply(), reply("c2:3", "42", "800"))));
        assertUnexpected(script, () -> ReadWriteLockPicture.of(script, reply(-2L, 0L, 0L, reply("c1:7", "x"), reply())));
    }

    /* --------------- SemaphorePicture --------------- */

    @Test
    void semaphorePicture_totalQueuedGrants() {
        assertEquals(new SemaphorePicture(5, 1, List.of(new SemaphorePicture.Grant("c1:7:2", 2, 900))),
                SemaphorePicture.of(Script.SEMAPHORE_SNAPSHOT, reply(5L, 1L, reply("c1:7:2", 2L, 900L))));
        assertEquals(new SemaphorePicture(0, 0, List.of()),
                SemaphorePicture.of(Script.SEMAPHORE_SNAPSHOT, reply(0L, 0L, reply())));
    }

    @Test
    void semaphorePicture_badShapes_areUnexpected() {
        Script script = Script.SEMAPHORE_SNAPSHOT;
        assertUnexpected(script, () -> SemaphorePicture.of(script, reply(5L, 1L)));
        assertUnexpected(script, () -> SemaphorePicture.of(script, reply(5L, 1L, reply("c1:7:2", 2L))));
        assertUnexpected(script, () -> SemaphorePicture.of(script, reply(5L, 1L, reply("c1:7:2", "2", 900L))));
        assertUnexpected(script, () -> SemaphorePicture.of(script, reply(5L, 1L, reply(3L, 2L, 900L))));
        assertThrows(IllegalArgumentException.class, () -> SemaphorePicture.of(Script.LOCK_SNAPSHOT, reply(5L, 1L, reply())));
    }

    /* --------------- SemaphoreReleaseReply --------------- */

    @Test
    void semaphoreRelease_releasedAndMissing() {
        Script script = Script.SEMAPHORE_RELEASE;
        assertEquals(new SemaphoreReleaseReply(3, List.of()), SemaphoreReleaseReply.of(script, reply(3L, "")));
        assertEquals(new SemaphoreReleaseReply(0, List.of("c1:7:2")), SemaphoreReleaseReply.of(script, reply(0L, "c1:7:2")));
        assertEquals(new SemaphoreReleaseReply(1, List.of("c1:7:2", "c1:8:5")),
                SemaphoreReleaseReply.of(script, reply(1L, "c1:7:2 c1:8:5")));
    }

    @Test
    void semaphoreRelease_badShapes_areUnexpected() {
        Script script = Script.SEMAPHORE_RELEASE;
        assertUnexpected(script, () -> SemaphoreReleaseReply.of(script, reply(3L)));
        assertUnexpected(script, () -> SemaphoreReleaseReply.of(script, reply(3L, 0L)));
        assertUnexpected(script, () -> SemaphoreReleaseReply.of(script, reply(-1L, "")));
        assertUnexpected(script, () -> SemaphoreReleaseReply.of(script, reply(1L, "c1:7:2  c1:8:5")));
        assertUnexpected(script, () -> SemaphoreReleaseReply.of(script, reply(1L, "c1:7:2 ")));
        assertThrows(IllegalArgumentException.class, () -> SemaphoreReleaseReply.of(Script.SEMAPHORE_ADD, reply(1L, "")));
    }

    /* --------------- RenewReply --------------- */

    @ParameterizedTest
    @EnumSource(value = Script.class, names = {"LOCK_RENEW", "FAIR_LOCK_RENEW_PLACE", "RW_READ_RENEW",
        "SEMAPHORE_RENEW_PLACE", "SEMAPHORE_RENEW", "REDLOCK_RENEW", "LOCK_CACHE_RENEW", "COND_RENEW_PLACE"})
    void renew_renewedAndGone_perItemInOrder(Script script) {
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.RENEWED)), RenewReply.of(script, reply(1L), 1));
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.GONE)), RenewReply.of(script, reply(0L), 1));
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.RENEWED, RenewReply.Outcome.GONE,
                RenewReply.Outcome.RENEWED)), RenewReply.of(script, reply(1L, 0L, 1L), 3));
        assertEquals(RenewReply.Outcome.GONE, RenewReply.of(script, reply(1L, 0L, 1L), 3).outcome(1));
    }

    @Test
    void renew_takenBack_onlyFromTheRedlockRenewal() {
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.TAKEN_BACK, RenewReply.Outcome.RENEWED,
                RenewReply.Outcome.GONE)), RenewReply.of(Script.REDLOCK_RENEW, reply(2L, 1L, 0L), 3));
        assertUnexpected(Script.LOCK_RENEW, () -> RenewReply.of(Script.LOCK_RENEW, reply(2L), 1));
        assertUnexpected(Script.SEMAPHORE_RENEW, () -> RenewReply.of(Script.SEMAPHORE_RENEW, reply(1L, 2L), 2));
    }

    @Test
    void renew_askedBack_onlyFromTheCacheRenewal() {
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.ASKED_BACK, RenewReply.Outcome.RENEWED,
                RenewReply.Outcome.GONE)), RenewReply.of(Script.LOCK_CACHE_RENEW, reply(2L, 1L, 0L), 3));
        assertUnexpected(Script.LOCK_CACHE_RENEW, () -> RenewReply.of(Script.LOCK_CACHE_RENEW, reply(3L), 1));
    }

    @Test
    void renew_signalled_onlyFromTheConditionPlaceRenewal() {
        assertEquals(new RenewReply(List.of(RenewReply.Outcome.SIGNALLED, RenewReply.Outcome.RENEWED,
                RenewReply.Outcome.GONE)), RenewReply.of(Script.COND_RENEW_PLACE, reply(2L, 1L, 0L), 3));
        assertUnexpected(Script.COND_RENEW_PLACE, () -> RenewReply.of(Script.COND_RENEW_PLACE, reply(3L), 1));
        assertUnexpected(Script.FAIR_LOCK_RENEW_PLACE, () -> RenewReply.of(Script.FAIR_LOCK_RENEW_PLACE, reply(2L), 1));
    }

    @Test
    void renew_badShapes_areUnexpected() {
        Script script = Script.REDLOCK_RENEW;
        assertUnexpected(script, () -> RenewReply.of(script, reply(), 1));
        assertUnexpected(script, () -> RenewReply.of(script, reply(1L), 2));
        assertUnexpected(script, () -> RenewReply.of(script, reply(1L, 1L), 1));
        assertUnexpected(script, () -> RenewReply.of(script, reply(3L), 1));
        assertUnexpected(script, () -> RenewReply.of(script, reply(-1L), 1));
        assertUnexpected(script, () -> RenewReply.of(script, reply("1"), 1));
        assertUnexpected(script, () -> RenewReply.of(script, reply((Object) null), 1));
        assertUnexpected(script, () -> RenewReply.of(script, null, 1));
        assertThrows(IllegalArgumentException.class, () -> RenewReply.of(Script.LOCK_RELEASE, reply(1L), 1));
    }
}
