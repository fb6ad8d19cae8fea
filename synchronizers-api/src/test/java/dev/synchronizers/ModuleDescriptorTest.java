package dev.synchronizers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleDescriptor.Requires;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The API's module descriptor (module-info.java): the module the tests run in is the named module
 * {@code dev.synchronizers}, it exports that package alone, unqualified, and requires nothing but
 * {@code java.base} ("no dependencies").
 */
class ModuleDescriptorTest {

    /* --------------- name --------------- */

    @Test
    void module_isNamedDevSynchronizers() {
        Module module = Synchronizers.class.getModule();
        assertTrue(module.isNamed(), "the API must run as a named module: " + module);
        assertEquals("dev.synchronizers", module.getName());
    }

    /* --------------- exports --------------- */

    @Test
    void exports_theApiPackageOnly_toEveryone() {
        ModuleDescriptor descriptor = Synchronizers.class.getModule().getDescriptor();
        Set<String> exported = descriptor.exports().stream().map(Exports::source).collect(Collectors.toSet());
        assertEquals(Set.of("dev.synchronizers"), exported);
        descriptor.exports().forEach(export -> assertTrue(!export.isQualified(), "qualified export: " + export));
        assertTrue(descriptor.opens().isEmpty(), "opens: " + descriptor.opens());
    }

    /* --------------- requires --------------- */

    @Test
    void requires_javaBaseOnly() {
        ModuleDescriptor descriptor = Synchronizers.class.getModule().getDescriptor();
        Set<String> required = descriptor.requires().stream().map(Requires::name).collect(Collectors.toSet());
        assertEquals(Set.of("java.base"), required);
        assertTrue(descriptor.uses().isEmpty() && descriptor.provides().isEmpty(), "services: " + descriptor);
    }
}
