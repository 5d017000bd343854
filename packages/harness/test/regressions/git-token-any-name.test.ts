/**
 * The git token is kept from Working tools whatever its variable is called (the adversary,
 * session 10): with `JR2_GIT_TOKEN_ENV=GH_PUSH` — a name that does not look like a secret's — the
 * variable reached a tool's environment, and a tool printing it got the token back, only its
 * name redacted. Root cause: the tool environment dropped variables by secret-looking names and
 * by the Harness's known secret values, and the git token's value was not among them. Now it is
 * (`JR2_GIT_TOKEN_ENV`'s variable and `JR2_GIT_TOKEN_FILE`'s content), so the variable is dropped
 * and any output holding the token is redacted.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRedactor, REDACTED } from "../../src/tools/secret-redaction.js";
import { harnessSecretValues, scrubEnvironment } from "../../src/tools/working-environment.js";

const TOKEN = "ghp_0123456789abcdefSECRETVALUE";

function toolView(environment: NodeJS.ProcessEnv) {
  const secrets = createRedactor(
    harnessSecretValues({ harnessToken: "h".repeat(40), sandboxToken: "", models: {}, environment }),
  );
  return { env: scrubEnvironment(environment, secrets), redact: (text: string) => secrets.redact(text) };
}

describe("the git token in a Working tool's reach", () => {
  it("a variable JR2_GIT_TOKEN_ENV names is dropped whatever its name, and the token is redacted", () => {
    for (const name of ["GH_PUSH", "FORGE_CRED", "GITEA_BEARER"]) {
      const { env, redact } = toolView({ PATH: "/usr/bin", JR2_GIT_TOKEN_ENV: name, [name]: TOKEN });
      expect(env, name).toEqual({ PATH: "/usr/bin" });
      expect(redact(`GH_PUSH=${TOKEN}`)).toBe(`GH_PUSH=${REDACTED}`);
    }
  });

  it("a copy of JR2_GIT_TOKEN_FILE's token in any variable is dropped, and redacted in output", () => {
    const file = join(mkdtempSync(join(tmpdir(), "jr2-token-")), "token");
    writeFileSync(file, `${TOKEN}\n`);
    const { env, redact } = toolView({ PATH: "/usr/bin", JR2_GIT_TOKEN_FILE: file, COPY: TOKEN });
    expect(env).toEqual({ PATH: "/usr/bin" });
    expect(redact(`the token is ${TOKEN}`)).toBe(`the token is ${REDACTED}`);
  });
});
