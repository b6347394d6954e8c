/**
 * The unknown-sub-command message of `switchyard keys` / `accounts` names the sub-commands the command
 * table (src/cli/command-table.ts `COMMANDS`) has, read off it: a sub-command added to the table is named
 * at once, where a list kept by hand beside the table would miss it (review19 R2).
 */
import { describe, expect, test } from "bun:test";
import { COMMANDS } from "../../src/main.ts";
import { accountsCommand } from "../../src/cli/routing.ts";
import { unknownSubcommand } from "../../src/cli/unknown-subcommand.ts";

/** The sub-commands of `cmd` as the table lists them, worked out here independently of the code under test. */
const tableSubs = (cmd: string) => Object.keys(COMMANDS).filter((k) => k.split(" ")[0] === cmd && k.includes(" ")).map((k) => k.split(" ")[1]);

/** `accounts WORD` run in-process, with `fail` throwing its line (exit code kept) instead of exiting. */
async function accountsRefusal(word: string): Promise<{ code: number | undefined; line: string }> {
  const failed = { code: undefined as number | undefined, line: "" };
  const io = {
    out: () => {},
    fail: (lines: string | readonly string[], code?: number): never => {
      failed.code = code;
      failed.line = typeof lines === "string" ? lines : lines.join("\n");
      throw new Error(failed.line);
    },
  };
  await accountsCommand(word, {}, async () => ({}), io).catch(() => {});
  return failed;
}

describe("the unknown-sub-command message names the table's sub-commands", () => {
  test("keys and accounts: exactly the table's, in its order (keys set and rotate among them)", async () => {
    expect(tableSubs("keys")).toContain("set");
    expect(tableSubs("keys")).toContain("rotate");
    for (const cmd of ["keys", "accounts"]) {
      expect(unknownSubcommand(cmd, "frob")).toBe(`unknown subcommand "frob" of switchyard ${cmd}; it takes ${tableSubs(cmd).join(", ")}`);
    }
    const r = await accountsRefusal("frob");
    expect(r.code).toBe(2);
    expect(r.line.split("\n")[0]).toBe(`unknown subcommand "frob" of switchyard accounts; it takes ${tableSubs("accounts").join(", ")}`);
  });

  test("a sub-command added to the table is named (and offered for a typo of it); a made-up word is still refused", async () => {
    COMMANDS["accounts reprobe"] = { options: [], words: 2 };
    COMMANDS["keys reprobe"] = { options: [], words: 2 };
    try {
      const r = await accountsRefusal("zzz");
      expect(r.code).toBe(2);
      expect(r.line.split("\n")[0]).toBe('unknown subcommand "zzz" of switchyard accounts; it takes status, remove, restore, unlock, close-circuit, reprobe');
      expect((await accountsRefusal("reprob")).line).toStartWith('unknown subcommand "reprob" of switchyard accounts (did you mean "reprobe"?)');
      expect(unknownSubcommand("keys", "zzz")).toBe('unknown subcommand "zzz" of switchyard keys; it takes create, list, set, revoke, rotate, disable, enable, reprobe');
    } finally {
      delete COMMANDS["accounts reprobe"];
      delete COMMANDS["keys reprobe"];
    }
    expect(unknownSubcommand("keys", "zzz")).not.toContain("reprobe");
  });
});
