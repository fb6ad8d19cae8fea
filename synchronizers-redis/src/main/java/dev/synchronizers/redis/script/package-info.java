/**
 * Internal: may change without notice. The catalogue of Lua scripts ({@link
 * dev.synchronizers.redis.script.Script}) and the registry that runs them by SHA1 ({@link
 * dev.synchronizers.redis.script.ScriptRegistry}).
 */
package dev.synchronizers.redis.script;
