/**
 * `switchyard setup cursor`, and `setup` with a CLI it does not know or none: Cursor's settings live in
 * its own app storage, so setup prints what to enter there (src/setup-commands.ts cursorSteps, as the
 * dashboard's Setup page shows it) for the running instance's URL and the client key setup would
 * write; any other name is refused (exit 2) saying which CLIs setup knows.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cursorSteps, SETUP_CLIS, SETUP_USAGE } from "../setup-commands.ts";
import { instanceUrl } from "./instance.ts";
import type { CliIo } from "./routing.ts";
import { PLACEHOLDER_KEY } from "./setup.ts";

/** The address the gateway listens on when nothing else is said (SPEC 2.1). */
const DEFAULT_URL = "http://127.0.0.1:20128";

/**
 * Runs `switchyard setup SUB` for a `sub` that is not one of {@link SETUP_CLIS}: `cursor` prints the
 * steps (the instance's URL from `--url` or `instance.json`, else the default address, said so; the
 * key from `--client-key`, `--key` or `$SWITCHYARD_KEY`, else a word saying what goes there);
 * anything else exits 2.
 */
export function setupOther(sub: string | undefined, values: Record<string, unknown>, dataDir: string, io: CliIo): void {
  const known = `setup writes the settings of ${SETUP_CLIS.join(", ")}, and prints what to enter in Cursor's (setup cursor)`;
  if (sub !== "cursor") io.fail([`${sub === undefined ? "setup needs the CLI to point at the gateway" : `setup does not know ${JSON.stringify(sub)}`}: ${known}`, ...`usage: ${SETUP_USAGE}`.split("\n")], 2);
  const options = ["model", "utility-model", "codex-bin", "dry-run", "undo"].filter((o) => values[o] !== undefined);
  if (options.length > 0) io.fail(`setup cursor writes nothing, so it takes no ${options.map((o) => `--${o}`).join(", ")}: it prints what to enter in Cursor's settings`, 2);
  const found = values.url !== undefined || existsSync(join(dataDir, "instance.json"));
  const url = found ? instanceUrl(values, dataDir) : DEFAULT_URL;
  // a key from the environment is a secret the user did not type here: named, never printed (as the other setups mask it)
  const given = (values["client-key"] ?? values.key) as string | undefined;
  const key =
    given ??
    (process.env.SWITCHYARD_KEY
      ? "the value of $SWITCHYARD_KEY (echo \"$SWITCHYARD_KEY\" shows it; or pass --client-key KEY to have it printed here)"
      : `${PLACEHOLDER_KEY} (any value while keys are not required; else a client key: switchyard keys create NAME)`);
  for (const line of cursorSteps(url, key)) io.out(line);
  if (!found) io.out(`(no running instance found in ${dataDir}: ${DEFAULT_URL} is the default address; pass --url or --data-dir for another)`);
}
