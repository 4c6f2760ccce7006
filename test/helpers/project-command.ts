/**
 * Commands (npm, node, tsc, openssl) run for a throw-away project outside the repository, as the
 * packaging and third-party-plugin tests install and use packed tarballs there.
 */
import { execFile } from 'node:child_process';

/**
 * The environment for such a child: `npm test` exports `npm_*` variables (the repo's prefix, the
 * running script, workspace flags) that would make npm in the temporary project act on the
 * repository instead, and vitest exports `VITEST*` to its workers. The npm cache location and user
 * config are kept, so `--offline` reads the same cache `npm ci` filled.
 */
export function projectEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if (lower.startsWith('vitest') || (lower.startsWith('npm_') && lower !== 'npm_config_cache' && lower !== 'npm_config_userconfig')) continue;
    env[key] = value;
  }
  return env;
}

/**
 * Run `command` in `cwd` with {@link projectEnv}, bounded by `timeoutMs`; rejects with the first
 * 4,000 characters of each output stream when it fails (npm's are long, and the start says why).
 */
export function runInProject(command: string, args: readonly string[], cwd: string, timeoutMs = 90_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: projectEnv(), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${error.message}\nstdout:\n${stdout.slice(0, 4000)}\nstderr:\n${stderr.slice(0, 4000)}`));
      else resolve({ stdout, stderr });
    });
  });
}
