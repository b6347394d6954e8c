/**
 * The restored-secret memory is kept per client key (SPEC S-3; src/restored-secrets.ts): a secret
 * restored into a reply to key A is redacted again in A's later requests, but not looked for in key
 * B's (B could otherwise probe guesses at A's values by what came back redacted) nor in requests
 * without a key, which share a memory of their own. The bounds hold over all keys together.
 */
import { describe, expect, test } from "bun:test";
import type { ClientKey } from "../../pipeline/ports.ts";
import { redact } from "../../pipeline/redact.ts";
import { restoreText } from "../../pipeline/restore-placeholders.ts";
import { RestoredSecretMemory } from "../../src/restored-secrets.ts";
import { settableClock } from "../accounts/helpers.ts";
import { guardedContext } from "../support/context.ts";

const clientKey = (name: string, id?: string): ClientKey => ({ name, id, scopes: [], source: "config" });

/** One Chat request with `content` as its assistant text, for `key`; what went upstream as that text. */
function send(memory: RestoredSecretMemory, key: ClientKey | undefined, content: string) {
  const ctx = guardedContext("chat", { model: "m", messages: [{ role: "user", content: "hi" }, { role: "assistant", content }] });
  ctx.key = key;
  redact(ctx, { enabled: true }, memory);
  return { ctx, sent: ctx.rawBody ? (JSON.parse(new TextDecoder().decode(ctx.rawBody)).messages[1].content as string) : content };
}

describe("the restored-secret memory is per client key", () => {
  test("a value restored for key A is redacted in A's requests only, not in key B's or in requests without a key", () => {
    const memory = new RestoredSecretMemory(settableClock());
    const A = clientKey("alice", "alice#1");
    const B = clientKey("bob", "bob#1");
    // Turn 1 of A: the password is found by its context and restored into the reply.
    const { ctx } = send(memory, A, "DATABASE_PASSWORD=Tr0ub4dor3xyz");
    expect(restoreText(ctx.restoration!, "The password is [SECRET_1]")).toBe("The password is Tr0ub4dor3xyz");
    // B (and a request without a key) sending the bare value: nothing says it is a secret, nothing is replaced.
    expect(send(memory, B, "is it Tr0ub4dor3xyz?").sent).toBe("is it Tr0ub4dor3xyz?");
    expect(send(memory, undefined, "is it Tr0ub4dor3xyz?").sent).toBe("is it Tr0ub4dor3xyz?");
    // A's next turn: replaced again.
    expect(send(memory, A, "The password is Tr0ub4dor3xyz").sent).toBe("The password is [SECRET_1]");
    // A key is known by its id: another generation of the name is another key.
    expect(send(memory, clientKey("alice", "alice#2"), "The password is Tr0ub4dor3xyz").sent).toBe("The password is Tr0ub4dor3xyz");
  });

  test("requests without a key share one memory; each key's values are looked for in its own requests, alternating", () => {
    const memory = new RestoredSecretMemory(settableClock());
    const A = clientKey("alice");
    memory.forKey(undefined).remember("anon-Secret-0001");
    memory.forKey("alice").remember("alice-Secret-0002");
    for (let i = 0; i < 3; i++) {
      expect(send(memory, undefined, "anon-Secret-0001 alice-Secret-0002").sent).toBe("[SECRET_1] alice-Secret-0002");
      expect(send(memory, A, "anon-Secret-0001 alice-Secret-0002").sent).toBe("anon-Secret-0001 [SECRET_1]");
    }
  });

  test("at most 256 values over all keys together and 64 for one key, the oldest go first; a busy key does not push another's out", () => {
    const memory = new RestoredSecretMemory(settableClock());
    const a = memory.forKey("a");
    const b = memory.forKey("b");
    for (let i = 0; i < 10; i++) a.remember(`a-value-${String(i).padStart(4, "0")}`);
    for (let i = 0; i < 300; i++) b.remember(`b-value-${String(i).padStart(4, "0")}`);
    expect(a.values().length).toBe(10);
    expect(b.values().length).toBe(64);
    expect(b.values()[0]).toBe("b-value-0236");
    // five keys of 64 over the global 256: the oldest key's values go first
    for (const k of ["c", "d", "e"]) for (let i = 0; i < 64; i++) memory.forKey(k).remember(`${k}-value-${String(i).padStart(4, "0")}`);
    expect(a.values()).toEqual([]);
    expect(memory.forKey("e").values().length).toBe(64);
    expect(memory.forKey("f").values()).toEqual([]);
  });

  test("a long value under a secret-named member (a Cookie header of 600 characters) restored into a reply is redacted in the next turn; characters are bounded per key and over all keys", () => {
    const memory = new RestoredSecretMemory(settableClock());
    const cookie = `sid=${"a1".repeat(300)}`;
    const A = clientKey("alice", "alice#1");
    const turn1 = guardedContext("messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: "go" }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "http", input: { cookie } }] }] });
    turn1.key = A;
    redact(turn1, { enabled: true }, memory);
    expect(restoreText(turn1.restoration!, "I sent [SECRET_1].")).toBe(`I sent ${cookie}.`);
    // turn 2 sends the reply back: nothing around the value says it is a secret (it went in clear past 512 characters)
    expect(send(memory, A, `I sent ${cookie}.`).sent).toBe("I sent [SECRET_1].");
    // 65,536 characters at most per value; 262,144 for one key (its oldest go first), 1,048,576 over all keys
    const long = (k: string, i: number) => `${k}${i}-`.padEnd(65_536, "x");
    const a = memory.forKey("a");
    a.remember(`${long("a", 0)}y`);
    expect(a.values()).toEqual([]);
    for (let i = 0; i < 5; i++) a.remember(long("a", i));
    expect(a.values()).toEqual([1, 2, 3, 4].map((i) => long("a", i)));
    for (const k of ["b", "c", "d"]) for (let i = 0; i < 4; i++) memory.forKey(k).remember(long(k, i));
    // 16 values of 65,536 characters fill the 1,048,576: alice's cookie, the oldest, went first; then a's oldest
    expect(memory.forKey("alice#1").values()).toEqual([]);
    expect(a.values().length).toBe(4);
    memory.forKey("e").remember(long("e", 0));
    expect(a.values()).toEqual([2, 3, 4].map((i) => long("a", i)));
  });
});
