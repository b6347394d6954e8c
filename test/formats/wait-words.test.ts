import { describe, expect, test } from "bun:test";
import { formatElapsed, formatWait } from "../../formats/wait-words.ts";

describe("durations in words", () => {
  test("a wait rounds every unit up (as Retry-After does), never saying a time before the real one", () => {
    expect(formatWait(0)).toBe("1 s");
    expect(formatWait(40_200)).toBe("41 s");
    expect(formatWait(3_600_000 + 500)).toBe("61 min");
    expect(formatWait(24 * 3_600_000 - 20_000)).toBe("24h 0m");
    expect(formatWait(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d 4h");
  });

  test("how long ago rounds down: a login that expired an hour and half a second ago expired '60 min ago', not 61", () => {
    expect(formatElapsed(3_600_000 + 500)).toBe("60 min");
    expect(formatElapsed(600_000 + 999)).toBe("10 min");
    expect(formatElapsed(40_900)).toBe("40 s");
    expect(formatElapsed(200)).toBe("1 s");
    expect(formatElapsed(2 * 3_600_000 + 5 * 60_000 + 59_000)).toBe("2h 5m");
  });
});
