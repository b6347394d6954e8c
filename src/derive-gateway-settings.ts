/**
 * Derives the guard's and the attempt loop's settings (pipeline GuardSettings, AttemptSettings) from the
 * running configuration, once per configuration: the running one is replaced as a whole on every change,
 * never edited in place, so a request reads the same object as the one before it (not an object per
 * request; docs/performance.md).
 */
import type { AttemptSettings, GuardSettings } from "../pipeline/index.ts";
import type { RuntimeConfig } from "./config/types.ts";

/** A function of the configuration that makes its settings at its first call and gives back the same object until called with another configuration. */
export function deriveGatewaySettings(): (c: RuntimeConfig) => GuardSettings & AttemptSettings {
  let settingsOf: RuntimeConfig | undefined;
  let settingsMade: GuardSettings & AttemptSettings = { requireApiKey: true, maxBodyBytes: 0, maxAttempts: 0, precommitDeadlineMs: 0 };
  return (c: RuntimeConfig): GuardSettings & AttemptSettings => {
    if (settingsOf !== c) {
      settingsOf = c;
      settingsMade = {
        requireApiKey: c.server.requireApiKey,
        maxBodyBytes: c.server.maxBodyBytes,
        bodyTimeoutMs: c.server.bodyTimeoutMs,
        maxAttempts: c.settings.maxAttempts,
        precommitDeadlineMs: c.settings.precommitDeadlineMs,
      };
    }
    return settingsMade;
  };
}
