/**
 * The Routing page's "New combo" error line (try18 D14): a refusal the admin API words as
 * `targets[0].model: unknown provider …` with `param` `targets[0].model` is shown with the field named
 * once, as the alias form's is.
 */
import { expect, test } from "bun:test";
import { comboErrorText } from "../../src/dashboard/client/combo-error.ts";

/** What api.ts's ApiError carries: the status, the message and the field (`param`). */
const apiError = (_status: number, message: string, param?: string) => Object.assign(new Error(message), { param });

test("the field is named once, whether or not the API's message starts with it", () => {
  const msg = 'targets[0].model: unknown provider "provider" in "provider/model"; known providers: anth';
  expect(comboErrorText(apiError(400, msg, "targets[0].model"))).toBe(msg);
  expect(comboErrorText(apiError(400, "must be fallback or round_robin", "strategy"))).toBe("strategy: must be fallback or round_robin");
  expect(comboErrorText(apiError(409, "A combo named x exists"))).toBe("A combo named x exists");
});
