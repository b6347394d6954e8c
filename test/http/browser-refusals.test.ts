/**
 * src/http/browser-refusals.ts on its own, with a hand-moved clock: every refusal counted, its log lines
 * bounded (one per reason and value per minute, the rest said as `more` in the next line of that pair; at
 * most MAX_REFUSAL_KEYS pairs at once, the refusals of further values said as `moreOtherValues`), the
 * surface of each path family, the value cut and its control characters escaped. The gateway's own
 * lines are in test/e2e/browser-guard-refusals.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { BrowserRefusalLog, HELD_BACK_MSG, MAX_REFUSAL_KEYS, REFUSAL_LOG_WINDOW_MS, shownValue, surfaceOf, type BrowserSurface } from "../../src/http/browser-refusals.ts";

function harness() {
  const counted: string[] = [];
  const lines: Array<Record<string, unknown>> = [];
  let now = 1_000_000;
  const log = new BrowserRefusalLog({ browserRefusal: (reason, surface) => void counted.push(`${reason}/${surface}`) }, (l) => void lines.push(JSON.parse(l)), () => now);
  return {
    log,
    counted,
    lines,
    advance: (ms: number) => void (now += ms),
    refuse: (origin: string, path = "/v1/chat/completions?x=1", reason: "origin" | "preflight" | "host" = "origin") =>
      log.note(new Request(`http://127.0.0.1:9${path}`, { method: "POST" }), { reason, value: origin }, reason === "host" ? 421 : 403),
  };
}

describe("BrowserRefusalLog", () => {
  test("one line per reason and value per minute; the next line says how many more", () => {
    const h = harness();
    for (let i = 0; i < 100; i++) h.refuse("https://evil.example");
    expect(h.counted.length).toBe(100);
    expect(h.lines.length).toBe(1);
    expect(h.lines[0]).toMatchObject({ level: "warn", reason: "origin", surface: "api", status: 403, method: "POST", path: "/v1/chat/completions", origin: "https://evil.example" });
    expect(h.lines[0]!.more).toBeUndefined();
    h.advance(REFUSAL_LOG_WINDOW_MS - 1);
    h.refuse("https://evil.example");
    expect(h.lines.length).toBe(1);
    h.advance(1);
    h.refuse("https://evil.example");
    expect(h.lines.length).toBe(2);
    expect(h.lines[1]!.more).toBe(100);
    // the same value under another reason is another pair
    h.refuse("https://evil.example", "/v1/chat/completions", "preflight");
    expect(h.lines.length).toBe(3);
    expect(h.counted.length).toBe(103);
  });

  test("past MAX_REFUSAL_KEYS values in a window, further values are counted, not logged, and said in a later line", () => {
    const h = harness();
    for (let i = 0; i < MAX_REFUSAL_KEYS + 50; i++) h.refuse(`https://evil-${i}.example`);
    expect(h.lines.length).toBe(MAX_REFUSAL_KEYS);
    expect(h.counted.length).toBe(MAX_REFUSAL_KEYS + 50);
    h.refuse("https://evil-0.example"); // within the window: counted as its pair's `more`
    h.advance(REFUSAL_LOG_WINDOW_MS);
    h.refuse("https://late.example");
    expect(h.lines.length).toBe(MAX_REFUSAL_KEYS + 2);
    // evil-0's one more, said under its own value as its pair is forgotten to make room (until session
    // 46 it went into the next line's moreOtherValues), then the 50 values not logged
    expect(h.lines.at(-2)).toMatchObject({ msg: HELD_BACK_MSG, refused: [{ reason: "origin", origin: "https://evil-0.example", more: 1 }] });
    expect(h.lines.at(-2)!.moreOtherValues).toBeUndefined();
    expect(h.lines.at(-1)).toMatchObject({ origin: "https://late.example", moreOtherValues: 50 });
    h.refuse("https://late-2.example");
    expect(h.lines.at(-1)!.moreOtherValues).toBeUndefined();
  });

  test("refusals of a value that stop within its minute are said once the minute is over, on the sweep, though the value is never refused again", () => {
    const h = harness();
    for (let i = 0; i < 40; i++) h.refuse("https://evil.example");
    for (let i = 0; i < 3; i++) h.refuse("rebind.evil.example", "/admin/api/keys", "host");
    h.refuse("https://once.example"); // nothing held back: nothing to say
    expect(h.lines.length).toBe(3);
    h.log.sweep(); // within the minute: its refusals may still come
    expect(h.lines.length).toBe(3);
    h.advance(REFUSAL_LOG_WINDOW_MS);
    h.log.sweep();
    expect(h.lines.length).toBe(4);
    expect(h.lines[3]).toEqual({
      level: "warn",
      time: 1_000_000 + REFUSAL_LOG_WINDOW_MS,
      msg: HELD_BACK_MSG,
      refused: [
        { reason: "origin", origin: "https://evil.example", more: 39 },
        { reason: "host", host: "rebind.evil.example", more: 2 },
      ],
    });
    // said once: a later sweep says nothing, and the value's next line has no `more`
    h.log.sweep();
    expect(h.lines.length).toBe(4);
    h.refuse("https://evil.example");
    expect(h.lines.length).toBe(5);
    expect(h.lines[4]!.more).toBeUndefined();
    expect(h.counted.length).toBe(45);
  });

  test("a refusal line of another value says what the ended minutes held back; values not logged at all are said by the sweep", () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.refuse("https://evil.example");
    h.advance(REFUSAL_LOG_WINDOW_MS);
    h.refuse("https://other.example");
    expect(h.lines.map((l) => l.msg)).toEqual(["browser rules refused a request", "browser rules refused a request", HELD_BACK_MSG]);
    expect(h.lines[2]).toMatchObject({ refused: [{ reason: "origin", origin: "https://evil.example", more: 4 }] });
    // past MAX_REFUSAL_KEYS values, the refusals not logged and no refusal line after them: the sweep says them
    for (let i = 0; i < MAX_REFUSAL_KEYS + 7; i++) h.refuse(`https://evil-${i}.example`);
    const before = h.lines.length;
    h.log.sweep();
    expect(h.lines.length).toBe(before + 1);
    expect(h.lines.at(-1)).toEqual({ level: "warn", time: 1_000_000 + REFUSAL_LOG_WINDOW_MS, msg: HELD_BACK_MSG, refused: [], moreOtherValues: 8 });
  });

  test("a Host refusal names the host, not an origin", () => {
    const h = harness();
    h.refuse("rebind.evil.example:20128", "/admin/api/keys", "host");
    expect(h.lines[0]).toMatchObject({ reason: "host", surface: "admin", status: 421, host: "rebind.evil.example:20128", hint: expect.stringContaining("server.allowed_hosts") });
    expect(h.lines[0]!.origin).toBeUndefined();
    expect(h.counted).toEqual(["host/admin"]);
  });
});

describe("surfaceOf", () => {
  const cases: Array<[string, Record<string, string>, BrowserSurface]> = [
    ["/v1/chat/completions", {}, "api"],
    ["/v1", {}, "api"],
    ["/v1beta/models/x:generateContent", {}, "api"],
    ["//v1//messages", {}, "api"],
    ["/v1/responses", { upgrade: "WebSocket" }, "websocket"],
    ["/admin/api/keys", {}, "admin"],
    ["/dashboard", {}, "dashboard"],
    ["/dashboard/assets/app.js", {}, "dashboard"],
    ["/metrics", {}, "metrics"],
    ["/health", {}, "health"],
    ["/api/hello", {}, "health"],
    ["/", {}, "other"],
    ["/v1x", {}, "other"],
    ["/administrator", {}, "other"],
  ];
  for (const [path, headers, surface] of cases) {
    test(`${path} ${JSON.stringify(headers)} is ${surface}`, () => {
      expect(surfaceOf(new Request(`http://127.0.0.1${path}`, { headers }), path)).toBe(surface);
    });
  }
});

describe("shownValue", () => {
  test("control characters escaped, the rest kept", () => {
    expect(shownValue("https://a.example\u001b]0;x\u0007\r\n\u009b\u202e\u2028é")).toBe("https://a.example\\u001b]0;x\\u0007\\r\\n\\u009b\\u202e\\u2028é");
  });
  test("cut at 200 characters, said with …, never inside a surrogate pair", () => {
    expect(shownValue("a".repeat(200))).toBe("a".repeat(200));
    expect(shownValue("a".repeat(201))).toBe("a".repeat(200) + "…");
    expect(shownValue("a".repeat(199) + "😀")).toBe("a".repeat(199) + "…");
  });
});
