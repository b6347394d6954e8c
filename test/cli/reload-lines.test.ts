/**
 * What `switchyard reload` prints (src/cli/reload.ts): the change in words, then the settings that wait
 * for a restart. An explicit reload after the instance re-read the edited file itself (it watches the
 * file) finds nothing new; it says so without reading as if the edit was missed.
 */
import { describe, expect, test } from "bun:test";
import { reloadLines } from "../../src/cli/reload.ts";

describe("reloadLines", () => {
  test("the changes by section, then one line per restart-only setting and per warning", () => {
    const lines = reloadLines({
      reloaded: true,
      file: "/etc/sy.yaml",
      changed: { aliases: { added: ["smart"], removed: [], changed: [] }, keys: { added: [], removed: ["ci", "build"], changed: [] }, server: ["port"] },
      restartNeeded: [{ path: "server.port", message: "server.port changed to 9: it takes effect when switchyard is restarted" }],
      warnings: [{ path: "settings.x", message: "unknown" }],
    });
    expect(lines).toEqual([
      "reloaded /etc/sy.yaml: alias smart added; keys ci, build removed; server port changed",
      "restart needed: server.port changed to 9: it takes effect when switchyard is restarted",
      "warning: settings.x: unknown",
    ]);
  });

  test("a re-read that finds the file as last read says nothing changed since then; a change an earlier re-read made still waits for the restart", () => {
    const lines = reloadLines({
      reloaded: true,
      file: "/etc/sy.yaml",
      changed: {},
      restartNeeded: [{ path: "server.database", message: "server.database changed: it takes effect when switchyard is restarted" }],
      warnings: [],
    });
    expect(lines).toEqual(["reloaded /etc/sy.yaml: nothing changed since the file was last read", "restart needed: server.database changed: it takes effect when switchyard is restarted"]);
  });

  test("with the last re-read that changed something, it says what that changed and when", () => {
    const lines = reloadLines({ reloaded: true, file: "/etc/sy.yaml", changed: {}, lastFileChange: { at: Date.UTC(2026, 11, 4, 23, 5, 12), changed: { combos: { added: ["tools"], removed: [], changed: [] }, settings: ["redaction"] } }, restartNeeded: [], warnings: [] });
    expect(lines).toEqual(["reloaded /etc/sy.yaml: nothing changed since the file was last read (at 2026-12-04T23:05:12.000Z: combo tools added; settings redaction changed)"]);
  });
});
