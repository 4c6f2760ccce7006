/**
 * Install step of @certsmith/native-ec: compile the addon with node-gyp. The addon is optional
 * (callers fall back to node:crypto), so a machine without a C compiler or Node's headers still
 * installs: the failure is reported and the install goes on. CI checks that it was built (the
 * package's tests fail without it when CI is set).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
// npm runs install scripts with its own node-gyp on PATH (and names it in npm_config_node_gyp).
const nodeGyp = process.env.npm_config_node_gyp;
const [command, args] = nodeGyp ? [process.execPath, [nodeGyp, 'rebuild']] : ['node-gyp', ['rebuild']];
const result = spawnSync(command, args, { cwd: packageDir, stdio: 'inherit' });
if (result.status !== 0) {
  const why = result.error ? result.error.message : `node-gyp exited with ${result.status ?? result.signal}`;
  process.stderr.write(
    `@certsmith/native-ec: the native addon was not built (${why}); ECDSA keys will be made with node:crypto (slower). ` +
      'Install a C compiler, make and python3, then run `npm rebuild @certsmith/native-ec`.\n',
  );
}
