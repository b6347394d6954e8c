/** Secret scrubbing (pipeline/scrub.ts): known secrets and credential-shaped tokens never pass. */
import { describe, expect, test } from "bun:test";
import { cutScrubbed, presentedSecrets, REDACTED, scrubAndCut, scrubbedHead, scrubErrorResponse, scrubText, scrubValue } from "../../pipeline/scrub.ts";

describe("scrubText", () => {
  test("known secrets are replaced exactly, however they are shaped, also JSON-escaped", () => {
    const s = 'odd"key\\with-quote-1234';
    expect(scrubText(`a upk_7Qm2Vx9K b upk_7Qm2Vx9K`, ["upk_7Qm2Vx9K"])).toBe(`a ${REDACTED} b ${REDACTED}`);
    expect(scrubText(JSON.stringify({ m: `bad ${s}` }), [s])).toBe(JSON.stringify({ m: `bad ${REDACTED}` }));
  });

  test("short or empty secrets are ignored (they would match ordinary text)", () => {
    expect(scrubText("the key is abc", ["abc", ""])).toBe("the key is abc");
  });

  test("credential shapes are replaced even when the secret is not known", () => {
    for (const [text, expected] of [
      ["Incorrect API key provided: sk-proj-abcdefghijklmnop1234", `Incorrect API key provided: ${REDACTED}`],
      ["x-api-key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA-BBB", `x-api-key ${REDACTED}`],
      ["client sy-0123456789abcdefghijkl", `client ${REDACTED}`],
      ["google AIzaSyA1234567890abcdefghijklmnopqrstu", `google ${REDACTED}`],
      ["oauth ya29.a0AfH6SMBxxxxxxxxxxxx", `oauth ${REDACTED}`],
      ["jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM", `jwt ${REDACTED}`],
      ["Authorization: Bearer abcdefghijklmnop.qrstuv", `Authorization: ${REDACTED}`],
    ]) {
      expect(scrubText(text)).toBe(expected);
    }
  });

  test("ordinary error text is left alone", () => {
    const t = "messages.0.content: Expected string. Send Authorization: Bearer KEY or x-api-key: KEY. model claude-sonnet-4-5 task-1234";
    expect(scrubText(t, ["not-in-there-123"])).toBe(t);
  });
});

describe("helpers", () => {
  test("presentedSecrets reads Authorization (any scheme) and x-api-key", () => {
    expect(presentedSecrets(new Headers({ authorization: "Bearer abc123", "x-api-key": "k2" }))).toEqual(["abc123", "k2"]);
    expect(presentedSecrets(new Headers())).toEqual([]);
  });

  test("scrubValue scrubs every string of a value", () => {
    expect(scrubValue({ attempts: [{ error: "echo upk_7Qm2Vx9K" }], n: 1 }, ["upk_7Qm2Vx9K"])).toEqual({ attempts: [{ error: `echo ${REDACTED}` }], n: 1 });
  });

  test("scrubErrorResponse scrubs error bodies, keeps status and headers, leaves successes and streams", async () => {
    const err = await scrubErrorResponse(new Response('{"error":"bad upk_7Qm2Vx9K"}', { status: 401, headers: { "x-request-id": "r1", "content-type": "application/json" } }), ["upk_7Qm2Vx9K"]);
    expect(err.status).toBe(401);
    expect(err.headers.get("x-request-id")).toBe("r1");
    expect(await err.text()).toBe(`{"error":"bad ${REDACTED}"}`);
    const ok = new Response("upk_7Qm2Vx9K", { status: 200 });
    expect(await scrubErrorResponse(ok, ["upk_7Qm2Vx9K"])).toBe(ok);
  });
});

describe("scrubAndCut: scrubbed as a whole, then cut", () => {
  const key = "plainsecretkeyvalue0000000";
  test("a known secret across the cut is replaced whole, never kept in part", () => {
    for (let before = 1; before < key.length; before++) {
      const text = `${"e".repeat(50 - before)}${key} and more`;
      const out = scrubAndCut(text, 50, [key]);
      expect(out.length).toBeLessThanOrEqual(50);
      expect([before, out.includes(key.slice(0, 4))]).toEqual([before, false]);
    }
  });
  test("the cut never ends inside a marker or between the halves of a surrogate pair", () => {
    expect(scrubAndCut(`ab ${key} cd`, 8, [key])).toBe("ab ");
    expect(scrubAndCut(`ab ${key} cd`, 13, [key])).toBe(`ab ${REDACTED}`);
    expect(cutScrubbed(`a${REDACTED}`, 5)).toBe("a");
    expect(cutScrubbed("ab😀c", 3)).toBe("ab");
    expect(cutScrubbed("short", 300)).toBe("short");
  });
});

describe("scrubbedHead: a text cut at a bound, read on past it", () => {
  const key = "plainsecretkeyvalue0000000";
  test("a known secret across the cut is left out; one before it is [redacted]; a head that is all of it is scrubbed", () => {
    for (let before = 1; before < key.length; before++) {
      const whole = `${key} ${"e".repeat(40 - before)}${key} and more text after the cut`;
      const out = scrubbedHead(whole, whole.slice(0, key.length + 41), [key]);
      expect([before, out]).toEqual([before, `${REDACTED} ${"e".repeat(40 - before)}`]);
    }
    expect(scrubbedHead(`a ${key}`, `a ${key}`, [key])).toBe(`a ${REDACTED}`);
  });
});
