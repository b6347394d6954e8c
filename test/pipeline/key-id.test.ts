/**
 * Client key ids (pipeline/key-id.ts, SPEC 9.6): a key created with a revoked key's name counts its use
 * under an id of its own, and the alerts still name the key by its name, read back from the id.
 */
import { describe, expect, test } from "bun:test";
import { configKeyIdFor, FIRST_STORED_GENERATION, keyId, keyIdFor, keyNameOfId } from "../../pipeline/key-id.ts";

describe("key ids", () => {
  test("a key stored before 2026-12-04 (generation 0) is counted by its name; a stored key since, by name#N, never by the name a config key counts under", () => {
    expect(keyIdFor("ci", FIRST_STORED_GENERATION)).toBe("ci#1");
    expect(keyIdFor("ci", FIRST_STORED_GENERATION)).not.toBe(configKeyIdFor("ci", false));
    expect(keyIdFor("ci", 0)).toBe("ci");
    expect(keyIdFor("ci", 1)).toBe("ci#1");
    expect(keyIdFor("ci", 12)).toBe("ci#12");
    expect(keyId({ name: "ci" })).toBe("ci");
    expect(keyId({ name: "ci", id: "ci#3" })).toBe("ci#3");
  });

  test("the name is read back from every id, and two keys never share an id, whatever the name holds", () => {
    const names = ["ci", "a#1", "a#", "#7", "x#1#2", "team-a.b_c", "b#config"];
    const ids = new Set<string>();
    for (const name of names) {
      for (const generation of [0, 1, 2, 10]) {
        const id = keyIdFor(name, generation);
        expect(keyNameOfId(id)).toBe(name);
        expect(ids.has(id)).toBe(false);
        ids.add(id);
      }
    }
    // A config key (its names follow the name rule: no `#`) with a stored namesake has an id of its own.
    for (const name of ["ci", "team-a.b_c"]) {
      const id = configKeyIdFor(name, true);
      expect(id).toBe(`${name}#config`);
      expect(keyNameOfId(id)).toBe(name);
      expect(ids.has(id)).toBe(false);
      expect(configKeyIdFor(name, false)).toBe(name);
    }
    // A name stored before the name rule that ends like an id keeps its own first id.
    expect(keyIdFor("a#1", 0)).toBe("a#1#0");
  });
});
