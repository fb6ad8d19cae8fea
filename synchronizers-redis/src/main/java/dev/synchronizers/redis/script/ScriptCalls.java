package dev.synchronizers.redis.script;

/**
 * What a {@link ScriptRegistry} reports of its calls, for the client's meters: handed down by the
 * metrics package (its recorder is one), so that scripts never depend on metrics. Implementations
 * must be thread-safe and quick; the defaults do nothing.
 */
public interface ScriptCalls {

    /** Reports nothing. */
    ScriptCalls NONE = new ScriptCalls() {
    };

    /**
     * One script call was sent.
     *
     * @param script the script
     */
    default void scriptCalled(Script script) {
    }

    /**
     * A script call met NOSCRIPT and was sent again with the script's text (or, when the answer
     * came after the command timeout, failed unanswered).
     *
     * @param script the script
     */
    default void noScript(Script script) {
    }
}
