/**
 * The first line of a usage error for a sub-command word a command does not know (`switchyard keys
 * frob`, `switchyard accounts lst`): what was wrong, the closest known word when it is plausibly a typo
 * (src/unknown-keys.ts `suggest`), and the words the command takes. Before (try19 D4) these printed only
 * the usage line, without saying which word was refused. The words it takes are read off the command
 * table (src/cli/command-table.ts `COMMANDS`), not kept beside it by hand (review19 R2).
 */
import { suggest } from "../unknown-keys.ts";
import { subcommandsOf } from "./command-table.ts";

/**
 * `unknown subcommand "lst" of switchyard keys (did you mean "list"?); it takes create, list, …`.
 * `command` is the command's name (`keys`), `word` the refused word; the sub-commands it takes are
 * those of {@link subcommandsOf}, in the table's order.
 */
export function unknownSubcommand(command: string, word: string): string {
  const known = subcommandsOf(command);
  const near = suggest(word, known);
  return `unknown subcommand ${JSON.stringify(word)} of switchyard ${command}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}; it takes ${known.join(", ")}`;
}
