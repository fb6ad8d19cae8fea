/**
 * Internal: may change without notice. The catalogue of Lua scripts ({@link
 * dev.synchronizers.redis.script.Script}) and the registry that runs them by SHA1 ({@link
 * dev.synchronizers.redis.script.ScriptRegistry}), and the typed replies of the scripts whose
 * callers read more than one number ({@link dev.synchronizers.redis.script.AcquireReply} and the
 * others): each decodes its scripts' raw replies in one place, by the shapes their headers
 * declare, and refuses any other shape with an {@link
 * dev.synchronizers.redis.script.UnexpectedReplyException} that names the script.
 */
package dev.synchronizers.redis.script;
