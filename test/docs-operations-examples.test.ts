/**
 * Every example of `docs/migrating-from-cfssl.md` and `docs/deploy.md` runs: against the built
 * server and the real tools the pages talk about — Debian's CFSSL 1.2.0 (`cfssl serve`,
 * `multirootca`, `cfssl`/`cfssljson` as clients), SoftHSM2, `systemd-analyze`. The pages mark
 * their fenced blocks as api.md does (`test/helpers/doc-examples.ts`), with these directives:
 *
 * | marker | block | what this test does |
 * |---|---|---|
 * | `file PATH` | any | writes the block to PATH: relative to the page's folder, or absolute inside the page's sandbox root (`/etc/certsmith/x` → `<root>/etc/certsmith/x`); a first line `# /some/path` must name the same file |
 * | `check` | json, with `file` | `certsmith config check` exits 0 in the service's environment (the shell session plus the env file) |
 * | `env-file` | sh, with `file` | a systemd `EnvironmentFile=`: read as systemd reads it, it must mean what a shell sourcing it sees; `…` placeholders get test secrets |
 * | `unit` | ini, with `file` | `systemd-analyze verify` without a warning; its ExecStart/EnvironmentFile are what the `systemctl` stand-in runs |
 * | `roots` | ini, with `file` | a multirootca roots file: `multirootca` starts with the flags of its first comment line |
 * | `serve` | sh | every `cfssl serve` / `certsmith serve` command of the block starts, on 127.0.0.1 and a free port |
 * | `compare` | sh, with `serve` | the same requests to the CFSSL server started last (`cfssl serve` or `multirootca`) and to certsmith: what the page says stays the same does, and the differences it lists are there |
 * | `run` | sh | bash `-e -o pipefail` in the page's folder with the stand-ins below first on PATH; one shell session per page (exports carry over); documented paths and `localhost:8888` mapped into the sandbox; exit 0, and every JSON envelope printed says `success: true` |
 * | `logs` | sh, with `run` | it printed a request log line |
 * | `haproxy` | haproxy | its health check passes on two instances started from the unit (which answer the same CA) and fails on one with a signer down; its servers use the unit's port (`store-many-instances.test.ts` runs the same configuration in HAProxy, in front of two instances on PostgreSQL) |
 * | `prometheus` | yaml | parses (`yq`, else the `yaml` package); its targets use the unit's metrics port, where `/metrics` answers (and only there) |
 * | `promql` | promql | every metric it names is exported, with the labels it uses |
 *
 * Nothing leaves the sandbox: stand-ins replace `sudo` (environment reset as sudo does, `-u` ignored),
 * `useradd` (recorded), `install` (owners dropped), `apt-get` (checks the packages are installed,
 * installs nothing), `systemctl`/`journalctl` (the page's one unit, run as systemd would: its
 * EnvironmentFile read at each start, output to a journal file), and `certsmith` (the built CLI).
 * Servers listen on 127.0.0.1 only and are stopped at the end.
 */
import { randomUUID, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatedRequest, createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { CLI_PATH, killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { DOC_ADDRESS, has, jsonValues, markedBlocks, runShell, unmarkedFences } from './helpers/doc-examples.js';
import type { Block, ShellResult } from './helpers/doc-examples.js';
import { startCfsslServe, startMultirootca } from './peers/cfssl-peer.js';
import type { CfsslPeer } from './peers/cfssl-peer.js';
import { findFreePort } from './peers/free-port.js';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));

/** Secrets the pages leave as `…` placeholders, filled in here. */
const TEST_SECRETS: Record<string, string> = { CERTSMITH_MAIN_KEY: '5f0e2d9c8b7a69584736251403f2e1d0', HSM_PIN: '246813' };
/** The operator's shell on the deploy page has these (the page says so before the SoftHSM steps). */
const OPERATOR_ENV = { HSM_PIN: TEST_SECRETS['HSM_PIN']!, HSM_SO_PIN: '135790' };
/** The auth key of the multirootca roots' configs in the CFSSL deployment below. */
const ROOTS_AUTH_KEY = '00112233445566778899aabbccddeeff';

/**
 * The CFSSL deployment the pages start from, made with cfssl itself: an offline root and the issuing
 * CA under it, cfssl's signing config (profiles with and without an auth key), bundling trust files
 * (flat, and as a cfssl_trust-style `trust/` folder with a `certdata/` keystore), and two multirootca
 * roots whose profiles need the auth key.
 */
const CFSSL_DEPLOYMENT = String.raw`
csr() { printf '{"CN":"%s","key":{"algo":"ecdsa","size":256},"names":[{"O":"Example"}]}' "$1"; }
csr "Example Root CA" | cfssl gencert -initca - 2>/dev/null | cfssljson -bare root
echo '{"signing":{"default":{"expiry":"43800h","usages":["cert sign","crl sign"],"ca_constraint":{"is_ca":true,"max_path_len":0,"max_path_len_zero":true}}}}' > root-config.json
csr "Example Issuing CA" | cfssl genkey - 2>/dev/null | cfssljson -bare ca
cfssl sign -ca root.pem -ca-key root-key.pem -config root-config.json ca.csr 2>/dev/null | cfssljson -bare ca
cat > config.json <<'EOF'
{
  "signing": {
    "default": { "expiry": "8760h", "usages": ["signing", "key encipherment", "server auth"] },
    "profiles": { "client": { "expiry": "8760h", "usages": ["signing", "key encipherment", "client auth"], "auth_key": "main" } }
  },
  "auth_keys": { "main": { "type": "standard", "key": "${ROOTS_AUTH_KEY}" } }
}
EOF
cp root.pem ca-bundle.crt && cp ca.pem int-bundle.crt
echo '[{"name":"System","weight":1,"hash_algo":"SHA2","key_algo":"ECDSA256","keystore":"ca-bundle.crt"}]' > ca-bundle.crt.metadata
mkdir -p trust/certdata && cp ca-bundle.crt int-bundle.crt trust/ && cp root.pem trust/certdata/system.pem
echo '[{"name":"System","weight":1,"hash_algo":"SHA2","key_algo":"ECDSA256","keystore":"certdata/system.pem"}]' > trust/ca-bundle.crt.metadata
for label in primary partners; do
  csr "Example $label CA" | cfssl gencert -initca - 2>/dev/null | cfssljson -bare "$label"
  jq '.signing.default.auth_key = "main"' config.json > "$label-config.json"
done
csr leaf.example.com | cfssl genkey - 2>/dev/null | cfssljson -bare leaf
`;

// ---------------------------------------------------------------------------------------------
// The sandbox: a page's folder, a fake root for the system paths it names, and the stand-ins.
// ---------------------------------------------------------------------------------------------

/** Paths the pages use on a real machine; the test maps them under the sandbox root. */
const SYSTEM_PATHS = /(?<![\w.-])\/(etc\/certsmith|etc\/systemd\/system|var\/lib\/certsmith)(?![\w.-])/g;

interface Sandbox {
  scratch: Scratch;
  /** The page's folder: where its commands run and its relative files live. */
  dir: string;
  root: string;
  bin: string;
  /** The page's shell session: what `run` blocks start with; their exports are kept. */
  env: NodeJS.ProcessEnv;
}

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** Shell text as written (backslashes kept); `\${` stands for the shell's `${`, as a template cannot hold it raw. */
function bash(strings: TemplateStringsArray): string {
  if (strings.length > 1) throw new Error('shell text takes no substitutions');
  return strings.raw[0]!.replaceAll('\\${', '${');
}

/**
 * Stand-ins, by name. `$SANDBOX` is replaced by the page's folder when they are written (sudo clears
 * the environment); every call is recorded in `$SANDBOX/calls.log`.
 */
const STAND_INS: Record<string, string> = {
  certsmith: `exec ${quote(process.execPath)} ${quote(CLI_PATH)} "$@"`,
  // sudo resets the environment to PATH and HOME plus --preserve-env names. SOFTHSM2_CONF, unless
  // preserved, points at a missing file, so a command that lost it fails instead of using the
  // machine's own tokens.
  sudo: bash`keep=(PATH="$PATH" HOME="$HOME" SOFTHSM2_CONF="$SANDBOX/no-softhsm2.conf")
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in
    -u) shift 2 ;;
    --preserve-env=*) IFS=, read -ra names <<< "\${1#--preserve-env=}"; for n in "\${names[@]}"; do [[ -v $n ]] && keep+=("$n=\${!n}"); done; shift ;;
    *) echo "sudo stand-in: unsupported option $1" >&2; exit 2 ;;
  esac
done
exec env -i "\${keep[@]}" "$@"`,
  useradd: 'exit 0',
  // Owners and groups (the service user) do not exist here; the rest is the real install.
  install: bash`args=()
while [[ $# -gt 0 ]]; do case $1 in -o|-g) shift 2 ;; *) args+=("$1"); shift ;; esac; done
exec /usr/bin/install "\${args[@]}"`,
  'apt-get': bash`[[ $1 == install ]] || { echo "apt-get stand-in: only install" >&2; exit 2; }
shift
for pkg in "$@"; do
  [[ $pkg == -* ]] && continue
  dpkg-query -W -f='\${Status}\n' "$pkg" 2>/dev/null | grep -q 'install ok installed' || { echo "apt-get stand-in: $pkg is not installed" >&2; exit 1; }
done`,
  journalctl: bash`[[ "$*" == "-u certsmith -o cat" ]] || { echo "journalctl stand-in: not supported: $*" >&2; exit 2; }
cat "$SANDBOX/systemd/journal"`,
  // The page's one unit, from systemd/unit.sh (written when the page's unit block is read).
  systemctl: bash`[[ -f "$SANDBOX/systemd/unit.sh" ]] || { echo "systemctl stand-in: no unit installed" >&2; exit 1; }
source "$SANDBOX/systemd/unit.sh"
# Running, and not a zombie (an exited child of an earlier block's shell may not have been reaped).
alive() { local stat; stat=$(cat "/proc/$1/stat" 2>/dev/null) && stat=\${stat##*) } && [[ \${stat:0:1} != Z ]]; }
# EnvironmentFile= as systemd reads it: KEY=VALUE, blanks around the value dropped, comments only as whole lines.
environment() {
  local line comment='^[[:space:]]*([#;]|$)' assignment='^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$' value
  while IFS= read -r line || [[ -n $line ]]; do
    [[ $line =~ $comment ]] && continue
    [[ $line =~ $assignment ]] || continue
    value=\${BASH_REMATCH[2]}; value=\${value#"\${value%%[![:space:]]*}"}; value=\${value%"\${value##*[![:space:]]}"}
    printf '%s=%s\0' "\${BASH_REMATCH[1]}" "$value"
  done < "$ENV_FILE"
}
start() {
  local vars pid
  mapfile -d '' vars < <(environment)
  env -i PATH="$PATH" HOME="$HOME" "\${vars[@]}" "\${EXEC_START[@]}" >> "$SANDBOX/systemd/journal" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$SANDBOX/systemd/pid"
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null "$HEALTH_URL" && return 0
    alive "$pid" || { echo "certsmith.service exited; journal:" >&2; tail -n 20 "$SANDBOX/systemd/journal" >&2; return 1; }
    sleep 0.1
  done
  echo "certsmith.service: no answer on $HEALTH_URL within 30 s" >&2; return 1
}
stop() {
  local pid; pid=$(cat "$SANDBOX/systemd/pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((STOP_TIMEOUT * 10))); do alive "$pid" || return 0; sleep 0.1; done
  echo "certsmith.service still running $STOP_TIMEOUT s after SIGTERM (TimeoutStopSec)" >&2; return 1
}
case "$*" in
  daemon-reload) [[ -f $UNIT_FILE ]] ;;
  "enable --now certsmith") start ;;
  "restart certsmith") stop && start ;;
  *) echo "systemctl stand-in: not supported: $*" >&2; exit 2 ;;
esac`,
};

async function createSandbox(name: string, operatorEnv: Record<string, string> = {}): Promise<Sandbox> {
  const scratch = await createScratch(`docs-${name}`);
  const sandbox: Sandbox = {
    scratch,
    dir: scratch.dir,
    root: scratch.path('root'),
    bin: scratch.path('bin'),
    env: {
      PATH: `${scratch.path('bin')}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
      HOME: scratch.path('home'),
      LANG: 'C.UTF-8',
      XDG_DATA_HOME: scratch.path('xdg'),
      SOFTHSM2_CONF: scratch.path('no-softhsm2.conf'),
      ...operatorEnv,
    },
  };
  for (const folder of [sandbox.root, sandbox.bin, scratch.path('home'), scratch.path('systemd')]) await mkdir(folder, { recursive: true });
  for (const [command, body] of Object.entries(STAND_INS)) {
    const file = join(sandbox.bin, command);
    await writeFile(file, `#!/usr/bin/env bash\necho "${command} $*" >> "$SANDBOX/calls.log"\n${body}\n`.replaceAll('$SANDBOX', scratch.dir));
    await chmod(file, 0o755);
  }
  const fixture = await shell(sandbox, CFSSL_DEPLOYMENT);
  expect(fixture.code, `making the CFSSL deployment failed:\n${fixture.stderr}`).toBe(0);
  return sandbox;
}

/** A path of the page, as it is in the sandbox. */
const inSandbox = (sandbox: Sandbox, text: string): string => text.replace(SYSTEM_PATHS, `${sandbox.root}/$1`);

/** Run a script in the page's session (bounded); on success the session takes its exports. */
async function shell(sandbox: Sandbox, script: string, timeoutMs = 60_000): Promise<ShellResult> {
  const saved = join(sandbox.dir, '.session');
  const result = await runShell(`trap 'env -0 > ${quote(saved)}' EXIT\n${script}`, sandbox.dir, timeoutMs, sandbox.env);
  if (result.code === 0) {
    const variables = (await readFile(saved, 'utf8')).split('\0').filter(Boolean);
    const shellOwn = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);
    sandbox.env = Object.fromEntries(variables.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]).filter(([key]) => !shellOwn.has(key!)));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Reading blocks: command lines, flags, environment files, units.
// ---------------------------------------------------------------------------------------------

/** The commands of a shell block: continuation lines joined, comments dropped, split on blanks. */
function commandLines(body: string): string[][] {
  return body
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split(/\s+/));
}

/** The value of a flag (`-name value` or `--name value`, as the pages write them) in a command line. */
function flagValue(words: readonly string[], name: string): string | undefined {
  const index = words.findIndex((word) => word === `-${name}` || word === `--${name}`);
  return index < 0 ? undefined : words[index + 1];
}

/** The same command line with a flag's value replaced. */
function withFlag(words: readonly string[], name: string, value: string): string[] {
  const index = words.findIndex((word) => word === `-${name}` || word === `--${name}`);
  expect(index, `no -${name} in ${words.join(' ')}`).toBeGreaterThanOrEqual(0);
  return words.map((word, i) => (i === index + 1 ? value : word));
}

/**
 * A certsmith/cfssl command line made to run here: on 127.0.0.1, on the given ports or any free one
 * (port 0: the server prints its address), with the page's files in the sandbox.
 */
function localServeArgs(sandbox: Sandbox, words: readonly string[], ports: { port?: number; metricsPort?: number } = {}): string[] {
  let args = words.map((word) => inSandbox(sandbox, word));
  if (flagValue(args, 'address') !== undefined) args = withFlag(args, 'address', '127.0.0.1');
  if (flagValue(args, 'port') !== undefined) args = withFlag(args, 'port', String(ports.port ?? 0));
  if (flagValue(args, 'metrics-address') !== undefined) args = withFlag(args, 'metrics-address', `127.0.0.1:${ports.metricsPort ?? 0}`);
  // Relative file names are the page folder's (the processes here do not run in it).
  return args.map((word, i) => (i > 0 && args[i - 1]!.startsWith('-') && existsSync(join(sandbox.dir, word)) ? join(sandbox.dir, word) : word));
}

/** The variables of a systemd EnvironmentFile, read as systemd reads it (no inline comments). */
function systemdEnvironment(text: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_]\w*)=(.*)$/.exec(line);
    if (match === null || /^\s*[#;]/.test(line)) continue;
    variables[match[1]!] = match[2]!.trim();
  }
  return variables;
}

/** Fill the `…` placeholders of an environment file with the test's secrets. */
function withTestSecrets(text: string): string {
  // Only the placeholder word: whatever follows it on the line stays, as systemd would see it.
  return text.replace(/^(\w+)=\S*…\S*/gm, (_, name: string) => {
    expect(TEST_SECRETS[name], `placeholder ${name}=… has no test secret`).toBeDefined();
    return `${name}=${TEST_SECRETS[name]}`;
  });
}

interface Unit {
  /** `Section.Key` → value, continuation lines joined (a repeated key keeps its last value). */
  settings: Record<string, string>;
  /** ExecStart's words. */
  execStart: string[];
}

function parseUnit(text: string): Unit {
  const settings: Record<string, string> = {};
  let section = '';
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header !== null) section = header[1]!;
    const setting = /^(\w+)=(.*)$/.exec(line.trim());
    if (setting !== null) settings[`${section}.${setting[1]}`] = setting[2]!.trim();
  }
  return { settings, execStart: (settings['Service.ExecStart'] ?? '').split(/\s+/) };
}

/** A YAML file as a value: with Debian's `yq` when installed, else with the `yaml` package (a root devDependency). */
async function parseYaml(file: string): Promise<unknown> {
  if ((await runShell('command -v yq', process.cwd(), 10_000)).code === 0) {
    const parsed = await runShell(`yq -c . ${quote(file)}`, process.cwd(), 10_000);
    expect(parsed.code, `yq ${file}:\n${parsed.stderr}`).toBe(0);
    return JSON.parse(parsed.stdout);
  }
  const { parse } = await import('yaml');
  return parse(await readFile(file, 'utf8'));
}

// ---------------------------------------------------------------------------------------------
// Servers and requests.
// ---------------------------------------------------------------------------------------------

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

interface RunningCertsmith {
  process: CertsmithProcess;
  url: string;
}

/** Start `certsmith <args>` (args start with `serve`) and wait for its listening line. */
async function startServe(args: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningCertsmith> {
  const started = spawnCertsmith(args, env);
  const line = await started.waitForLine((candidate) => LISTENING.test(candidate), 60_000);
  return { process: started, url: LISTENING.exec(line)![1]! };
}

/** SIGTERM and the exit status (bounded). */
async function stopServe(server: RunningCertsmith, timeoutMs: number): Promise<number | null> {
  server.process.child.kill('SIGTERM');
  return (await server.process.waitForExit(timeoutMs)).code;
}

interface Reply {
  status: number;
  text: string;
  body: { success?: boolean; result?: Record<string, any>; errors?: { code: number; message: string }[] } | null;
}

async function request(url: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply & { headers: Headers }> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
    headers,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: Reply['body'] = null;
  try {
    parsed = JSON.parse(text) as Reply['body'];
  } catch {
    // CFSSL answers some errors in text/plain.
  }
  return { status: response.status, text, body: parsed, headers: response.headers };
}

const resultKeys = (reply: Reply): string[] => Object.keys(reply.body?.result ?? {}).sort();

/** Result fields CFSSL added after the 1.2.0 the comparison runs, which certsmith has (it follows current CFSSL). */
const NEWER_CFSSL_FIELDS = new Set(['leaf_expires']);

function expectSameShape(cfssl: Reply, certsmith: Reply, what: string): void {
  expect([cfssl.status, cfssl.body?.success], `${what}: cfssl ${cfssl.text.slice(0, 300)}`).toEqual([200, true]);
  expect([certsmith.status, certsmith.body?.success], `${what}: certsmith ${certsmith.text.slice(0, 300)}`).toEqual([200, true]);
  const theirs = resultKeys(cfssl);
  const ours = resultKeys(certsmith);
  expect(theirs.filter((key) => !ours.includes(key)), `${what}: result keys certsmith lacks`).toEqual([]);
  expect(ours.filter((key) => !theirs.includes(key) && !NEWER_CFSSL_FIELDS.has(key)), `${what}: result keys cfssl does not have`).toEqual([]);
}

const issuedBy = (pem: string, caFile: string): Promise<boolean> =>
  readFile(caFile, 'utf8').then((ca) => new X509Certificate(pem).verify(new X509Certificate(ca).publicKey));

/** `cfssl serve` and certsmith started from the same files answer the same way; CFSSL's client works with both. */
async function compareWithCfsslServe(sandbox: Sandbox, cfssl: CfsslPeer, certsmith: RunningCertsmith): Promise<void> {
  const servers = { cfssl: cfssl.url, certsmith: certsmith.url };
  const replies: Record<'cfssl' | 'certsmith', Record<string, Reply>> = { cfssl: {}, certsmith: {} };
  const ask = async (operation: string, body: (own: Record<string, Reply>) => unknown): Promise<void> => {
    for (const name of ['cfssl', 'certsmith'] as const) replies[name][operation] = await request(servers[name], `/api/v1/cfssl/${operation}`, body(replies[name]));
    expectSameShape(replies.cfssl[operation]!, replies.certsmith[operation]!, operation);
  };
  const subject = { CN: 'app.example.com', hosts: ['app.example.com'] };
  await ask('info', () => ({}));
  await ask('newkey', () => ({ ...subject, key: { algo: 'ecdsa', size: 256 } }));
  await ask('newcert', () => ({ request: subject }));
  await ask('sign', (own) => ({ certificate_request: own['newkey']!.body!.result!['certificate_request'], hosts: subject.hosts }));
  await ask('bundle', (own) => ({ certificate: own['newcert']!.body!.result!['certificate'] }));
  await ask('certinfo', (own) => ({ certificate: own['newcert']!.body!.result!['certificate'] }));
  const { cfssl: theirs, certsmith: ours } = replies;
  expect(ours['info']!.body!.result!['certificate'].trim()).toBe(theirs['info']!.body!.result!['certificate'].trim());
  expect(ours['bundle']!.body!.result!['status']).toEqual(theirs['bundle']!.body!.result!['status']);
  for (const operation of ['newcert', 'sign']) expect(await issuedBy(ours[operation]!.body!.result!['certificate'], join(sandbox.dir, 'ca.pem')), operation).toBe(true);
  // "Clients keep working: cfssl gencert -remote" (1.2.0 wants the scheme in -remote).
  for (const [name, url] of Object.entries(servers)) {
    const client = await shell(sandbox, `echo '{"CN":"client.example.com","hosts":["client.example.com"]}' | cfssl gencert -remote ${url} - | cfssljson -bare client-${name}`);
    expect(client.code, `cfssl gencert -remote against ${name}:\n${client.stderr}`).toBe(0);
  }
}

/** multirootca and the certsmith translation of its roots file issue from the same roots for the same labels. */
async function compareWithMultirootca(sandbox: Sandbox, multirootca: CfsslPeer, certsmith: RunningCertsmith): Promise<void> {
  const csr = await readFile(join(sandbox.dir, 'leaf.csr'), 'utf8');
  const authsign = (url: string, label?: string): Promise<Reply> =>
    request(url, '/api/v1/cfssl/authsign', authenticatedRequest({ certificate_request: csr, hosts: ['leaf.example.com'], ...(label ? { label } : {}) }, ROOTS_AUTH_KEY));
  // `-l primary` ↔ the `default` entry: requests without a label go to the primary root on both.
  for (const label of ['primary', undefined]) {
    const [theirs, ours] = [await authsign(multirootca.url, label), await authsign(certsmith.url, label)];
    expectSameShape(theirs, ours, `authsign label ${label ?? '(none)'}`);
    for (const reply of [theirs, ours]) expect(await issuedBy(reply.body!.result!['certificate'], join(sandbox.dir, 'primary.pem'))).toBe(true);
  }
  const [theirInfo, ourInfo] = [await request(multirootca.url, '/api/v1/cfssl/info', { label: 'partners' }), await request(certsmith.url, '/api/v1/cfssl/info', { label: 'partners' })];
  expectSameShape(theirInfo, ourInfo, 'info label partners');
  expect(ourInfo.body!.result!['certificate'].trim()).toBe(theirInfo.body!.result!['certificate'].trim());
  // `nets = 10.0.0.0/8`: multirootca refuses this client (127.0.0.1); certsmith has no per-label allow list.
  expect((await authsign(multirootca.url, 'partners')).status).toBe(403);
  const partners = await authsign(certsmith.url, 'partners');
  expect(partners.body?.success, partners.text).toBe(true);
  expect(await issuedBy(partners.body!.result!['certificate'], join(sandbox.dir, 'partners.pem'))).toBe(true);
}

// ---------------------------------------------------------------------------------------------
// One page.
// ---------------------------------------------------------------------------------------------

/** What a page's blocks have started and written so far. */
interface PageState {
  sandbox: Sandbox;
  /** The CFSSL server started last, and what it is. */
  peer?: { kind: 'cfssl serve' | 'multirootca'; server: CfsslPeer };
  peers: CfsslPeer[];
  certsmiths: RunningCertsmith[];
  /** The page's systemd unit and where its instance listens (documented port → real one). */
  unit?: Unit & { port: number; metricsPort: number; envFile: string };
  /** Files written by `file` blocks, by the path the page names. */
  files: Map<string, string>;
  /** What the last `run` block printed. */
  lastOutput: string;
}

/** The handlers of the directives, by name; a block runs the handlers of its directives in order. */
type Handler = (state: PageState, block: Block, where: string) => Promise<void>;

const handlers: Record<string, Handler> = {
  async file(state, block, where) {
    const named = has(block, 'file')![1]!;
    const leading = /^# (\/\S+)/.exec(block.body)?.[1];
    if (leading !== undefined) expect(leading, `${where}: the block says it is ${leading}`).toBe(named);
    const path = named.startsWith('/') ? inSandbox(state.sandbox, named) : join(state.sandbox.dir, named);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${has(block, 'env-file') ? withTestSecrets(block.body) : block.body}\n`);
    state.files.set(named, path);
  },

  async check(state, block, where) {
    const path = state.files.get(has(block, 'file')![1]!)!;
    const serviceEnv = state.unit ? systemdEnvironment(await readFile(state.unit.envFile, 'utf8')) : {};
    const result = await shell(state.sandbox, `env ${Object.entries(serviceEnv).map(([key, value]) => quote(`${key}=${value}`)).join(' ')} certsmith config check ${quote(path)}`);
    expect(result.code, `${where}: config check:\n${result.stdout}${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/: OK \(/);
  },

  async 'env-file'(state, block, where) {
    const path = state.files.get(has(block, 'file')![1]!)!;
    const text = await readFile(path, 'utf8');
    expect(text, `${where}: the stand-in reads plain KEY=value lines only`).not.toMatch(/^\s*\w+=.*["'\\]/m);
    const sourced = await runShell(`set -a; . ${quote(path)}; env -0`, state.sandbox.dir, 10_000, { PATH: '/usr/bin:/bin' });
    const shellView = Object.fromEntries(sourced.stdout.split('\0').filter(Boolean).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
    const systemdView = systemdEnvironment(text);
    expect(Object.keys(systemdView).length, where).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(systemdView)) {
      expect(value, `${where}: ${name} means something else to systemd (an inline comment?)`).toBe(shellView[name]);
    }
  },

  async unit(state, block, where) {
    const path = state.files.get(has(block, 'file')![1]!)!;
    const unit = parseUnit(block.body);
    expect(unit.execStart.slice(1, 2), `${where}: ExecStart`).toEqual(['serve']);
    const envFile = inSandbox(state.sandbox, unit.settings['Service.EnvironmentFile']!);
    // The unit's ports must be known before it starts: the page's curl commands and the health wait use them.
    const port = await findFreePort();
    let metricsPort = await findFreePort();
    while (metricsPort === port) metricsPort = await findFreePort();
    const execStart = [join(state.sandbox.bin, 'certsmith'), ...localServeArgs(state.sandbox, unit.execStart.slice(1), { port, metricsPort })];
    state.unit = { ...unit, port, metricsPort, envFile };
    await writeFile(
      join(state.sandbox.dir, 'systemd', 'unit.sh'),
      [
        `UNIT_FILE=${quote(path)}`,
        `ENV_FILE=${quote(envFile)}`,
        `EXEC_START=(${execStart.map(quote).join(' ')})`,
        `HEALTH_URL=${quote(`http://127.0.0.1:${port}/api/v1/cfssl/health`)}`,
        `STOP_TIMEOUT=${Number.parseInt(unit.settings['Service.TimeoutStopSec'] ?? '90', 10)}`,
        '',
      ].join('\n'),
    );
    // tools/ensure-system-deps.sh installs systemd (for systemd-analyze) before the suite runs.
    const present = await runShell('command -v systemd-analyze', state.sandbox.dir, 10_000);
    expect(present.code, 'systemd-analyze is required (apt-get install systemd)').toBe(0);
    // verify checks that ExecStart's program exists: give it the stand-in for /usr/local/bin/certsmith.
    const copy = join(state.sandbox.dir, 'verify', 'certsmith.service');
    await mkdir(dirname(copy), { recursive: true });
    await writeFile(copy, block.body.replace(unit.execStart[0]!, join(state.sandbox.bin, 'certsmith')));
    const verified = await runShell(`systemd-analyze verify --man=no ${quote(copy)}`, state.sandbox.dir, 30_000);
    // It exits 0 on unknown keys and unparsable values, warning only: any output is a failure.
    expect([verified.code, verified.stdout + verified.stderr], `${where}: systemd-analyze verify`).toEqual([0, '']);
  },

  async roots(state, block, where) {
    const command = /^# \S+ \((multirootca .*)\)$/m.exec(block.body)?.[1];
    expect(command, `${where}: first line should be "# FILE (multirootca …)"`).toBeDefined();
    const words = command!.split(/\s+/);
    expect(words.filter((word) => word.startsWith('-')).sort(), `${where}: flags the peer helper passes`).toEqual(['-a', '-l', '-roots']);
    const server = await startMultirootca({ rootsFile: flagValue(words, 'roots')!, defaultLabel: flagValue(words, 'l'), cwd: state.sandbox.dir });
    state.peers.push(server);
    state.peer = { kind: 'multirootca', server };
  },

  async serve(state, block, where) {
    // Started side by side (each takes a few seconds); a block has at most one server of each kind.
    await Promise.all(
      commandLines(block.body).map(async (words) => {
        const command = words.slice(0, 2).join(' ');
        const args = localServeArgs(state.sandbox, words.slice(2));
        if (command === 'cfssl serve') {
          // The peer helper sets -address and -port itself; it passes these file flags.
          const options = { ca: 'ca', 'ca-key': 'caKey', config: 'config', 'ca-bundle': 'caBundle', 'int-bundle': 'intBundle', metadata: 'metadata' } as const;
          const flags = words.filter((word) => word.startsWith('-')).map((word) => word.replace(/^--?/, ''));
          expect(flags.filter((flag) => !(flag in options) && flag !== 'address' && flag !== 'port'), `${where}: cfssl flags`).toEqual([]);
          const server = await startCfsslServe(Object.fromEntries(Object.entries(options).map(([flag, key]) => [key, flagValue(args, flag)])));
          state.peers.push(server);
          state.peer = { kind: 'cfssl serve', server };
        } else {
          expect(command, `${where}: a serve block starts servers only`).toBe('certsmith serve');
          state.certsmiths.push(await startServe(['serve', ...args], state.sandbox.env));
        }
      }),
    );
  },

  async compare(state, block, where) {
    expect(state.peer, `${where}: nothing to compare with`).toBeDefined();
    const certsmith = state.certsmiths.at(-1)!;
    if (state.peer!.kind === 'cfssl serve') await compareWithCfsslServe(state.sandbox, state.peer!.server, certsmith);
    else await compareWithMultirootca(state.sandbox, state.peer!.server, certsmith);
  },

  async run(state, block, where) {
    const port = state.unit?.port ?? 8888;
    const result = await shell(state.sandbox, inSandbox(state.sandbox, block.body).replace(DOC_ADDRESS, `127.0.0.1:${port}`), 90_000);
    expect(result.code, `${where} exited ${result.code}:\n${result.stderr}\n${result.stdout}`).toBe(0);
    for (const value of jsonValues(result.stdout)) {
      if (typeof value === 'object' && value !== null && 'success' in value) expect(value, where).toMatchObject({ success: true });
    }
    state.lastOutput = result.stdout;
  },

  async logs(state, _block, where) {
    const lines = state.lastOutput.split('\n').map(parseLogLine);
    expect(lines.some((line) => line?.['msg'] === 'request'), `${where}: no request log line printed`).toBe(true);
  },

  async haproxy(state, block, where) {
    const unit = state.unit!;
    const check = /option httpchk GET (\S+)/.exec(block.body)?.[1];
    const expected = /http-check expect string (\S+)/.exec(block.body)?.[1]?.replace(/\\(.)/g, '$1');
    const servers = [...block.body.matchAll(/^\s*server \S+ [\d.]+:(\d+)/gm)].map((match) => match[1]);
    expect(check && expected && servers.length, `${where}: health check and servers`).toBeTruthy();
    expect(servers, `${where}: servers listen on the unit's --port`).toEqual(servers.map(() => flagValue(unit.execStart, 'port')));
    // A second instance from the same unit (its own port and data dir), as on a second machine.
    const env = { ...state.sandbox.env, ...systemdEnvironment(await readFile(unit.envFile, 'utf8')) };
    const secondArgs = withFlag(localServeArgs(state.sandbox, unit.execStart.slice(1)), 'data-dir', join(state.sandbox.dir, 'ca2-data'));
    // And one with a signer down (a remote CA nobody answers for), on which the check must fail.
    const config = flagValue(secondArgs, 'config')!;
    const degraded = JSON.parse(await readFile(config, 'utf8')) as { signers: Record<string, unknown> };
    degraded.signers['remote'] = { plugin: '@certsmith/signer-multiroot', options: { remotes: `127.0.0.1:${await findFreePort()}` } };
    await writeFile(join(dirname(config), 'degraded.json'), JSON.stringify(degraded));
    const degradedArgs = withFlag(withFlag(localServeArgs(state.sandbox, unit.execStart.slice(1)), 'config', join(dirname(config), 'degraded.json')), 'data-dir', join(state.sandbox.dir, 'ca3-data'));
    const [second, down] = await Promise.all([startServe(secondArgs, env), startServe(degradedArgs, env)]);
    const first = `http://127.0.0.1:${unit.port}`;
    for (const url of [first, second.url]) {
      const health = await request(url, check!);
      expect(health.status, `${url}${check}`).toBe(200);
      expect(health.text, `${url}${check}`).toContain(expected);
    }
    const infos = await Promise.all([first, second.url].map((url) => request(url, '/api/v1/cfssl/info', {})));
    expect(infos[1]!.body!.result!['certificate'], 'both instances answer the same CA').toBe(infos[0]!.body!.result!['certificate']);
    // Request IDs set by the load balancer (%[uuid]) are echoed.
    const id = randomUUID();
    expect((await request(first, check!, undefined, { 'X-Request-Id': id })).headers.get('x-request-id')).toBe(id);
    // KillSignal=SIGTERM: the instance drains and exits 0 within TimeoutStopSec.
    expect(await stopServe(second, Number.parseInt(unit.settings['Service.TimeoutStopSec']!, 10) * 1000)).toBe(0);
    // The degraded instance answers 200 but must fail the check once its remote is marked down.
    let health = await request(down.url, check!);
    for (let tries = 0; health.body?.result?.['healthy'] !== false && tries < 100; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      health = await request(down.url, check!);
    }
    expect([health.status, health.body?.result?.['healthy']], `200 even when unhealthy: ${health.text}`).toEqual([200, false]);
    expect(health.text, `${where}: the check must fail while a signer is down`).not.toContain(expected);
    await stopServe(down, 30_000);
  },

  async prometheus(state, block, where) {
    const unit = state.unit!;
    const file = join(state.sandbox.dir, 'prometheus.yml');
    await writeFile(file, block.body);
    const config = (await parseYaml(file)) as { scrape_configs: { static_configs: { targets: string[] }[] }[] };
    const targets = config.scrape_configs.flatMap((scrape) => scrape.static_configs.flatMap((group) => group.targets));
    const metricsPort = flagValue(unit.execStart, 'metrics-address')!.split(':').at(-1);
    expect(targets.map((target) => target.split(':').at(-1)), `${where}: targets use the unit's --metrics-address port`).toEqual(targets.map(() => metricsPort));
    const metrics = await request(`http://127.0.0.1:${unit.metricsPort}`, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('# TYPE certsmith_http_requests_total counter');
    expect((await request(`http://127.0.0.1:${unit.port}`, '/metrics')).status, 'with --metrics-address, /metrics is only there').toBe(404);
  },

  async promql(state, block, where) {
    const exposition = (await request(`http://127.0.0.1:${state.unit!.metricsPort}`, '/metrics')).text;
    const families = new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1]!, match[2]!]));
    const sampleLabels = (series: string): Set<string> | undefined => {
      const samples = [...exposition.matchAll(new RegExp(`^${series}\\{([^}]*)\\}`, 'gm'))];
      return samples.length === 0 ? undefined : new Set(samples.flatMap((sample) => [...sample[1]!.matchAll(/(\w+)="/g)].map((label) => label[1]!)));
    };
    let labelsChecked = 0;
    for (const query of block.body.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))) {
      const labels = new Set([...query.matchAll(/by \(([^)]*)\)/g)].flatMap((match) => match[1]!.split(/\s*,\s*/)).concat([...query.matchAll(/[{,]\s*(\w+)\s*(?:=~|!~|!=|=)/g)].map((match) => match[1]!)));
      for (const series of query.match(/certsmith_\w+/g) ?? []) {
        const family = series.replace(/_(bucket|sum|count)$/, '');
        expect(families.has(series) || families.get(family) === 'histogram', `${where}: ${series} is not exported`).toBe(true);
        const exported = sampleLabels(series);
        if (exported === undefined) continue; // no sample yet (e.g. no signer failure): names only
        labelsChecked += 1;
        for (const label of labels) expect(exported.has(label), `${where}: ${series} has no label ${label} (${query.trim()})`).toBe(true);
      }
    }
    expect(labelsChecked, `${where}: labels checked on some queries`).toBeGreaterThan(3);
  },
};

/** Handlers run in this order, whatever the order of the directives in the marker. */
const DIRECTIVE_ORDER = ['file', 'env-file', 'unit', 'check', 'roots', 'serve', 'compare', 'run', 'logs', 'haproxy', 'prometheus', 'promql'];

/** Collect the page's block tests (in page order) with a fresh sandbox for it. */
function describePage(name: string, page: string, options: { operatorEnv?: Record<string, string>; after?: (state: () => PageState) => void }): void {
  const state = {} as PageState;
  describe(`docs/${name} examples`, () => {
    beforeAll(async () => {
      for (const tool of ['curl', 'jq', 'openssl', 'cfssl', 'cfssljson', 'multirootca', 'softhsm2-util']) {
        if ((await runShell(`command -v ${tool}`, process.cwd(), 10_000)).code !== 0) throw new Error(`docs/${name} examples need ${tool} on PATH`);
      }
      Object.assign(state, { sandbox: await createSandbox(name.replace(/\.md$/, ''), options.operatorEnv), peers: [], certsmiths: [], files: new Map(), lastOutput: '' });
    });

    afterAll(async () => {
      await killAllCertsmith();
      for (const peer of state.peers ?? []) await peer.stop();
      // The unit's instance was started by the systemctl stand-in, not by this process.
      const pidFile = state.sandbox && join(state.sandbox.dir, 'systemd', 'pid');
      if (pidFile && existsSync(pidFile)) {
        try {
          process.kill(Number(await readFile(pidFile, 'utf8')), 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await state.sandbox?.scratch.cleanup();
    });

    it('marks every fenced block', () => {
      expect(unmarkedFences(page), `unmarked fenced blocks at these lines of docs/${name}`).toEqual([]);
    });

    for (const block of markedBlocks(page)) {
      const where = `docs/${name}:${block.line}`;
      const names = block.directives.map((directive) => directive[0]!);
      const unknown = names.filter((directive) => !(directive in handlers));
      it(`${where} (${block.directives.map((directive) => directive.join(' ')).join('; ')})`, async () => {
        expect(unknown, `${where}: unknown directives`).toEqual([]);
        for (const directive of DIRECTIVE_ORDER.filter((candidate) => names.includes(candidate))) await handlers[directive]!(state, block, where);
      });
    }

    options.after?.(() => state);
  });
}

// ---------------------------------------------------------------------------------------------
// The pages.
// ---------------------------------------------------------------------------------------------

const MIGRATING = await readFile(join(DOCS, 'migrating-from-cfssl.md'), 'utf8');
const DEPLOY = await readFile(join(DOCS, 'deploy.md'), 'utf8');

/** The rows of the markdown table under `heading` (cells, header and rule rows dropped). */
function tableRows(page: string, heading: string): string[][] {
  const section = page.slice(page.indexOf(heading)).split(/\n## /)[0]!;
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2)
    .map((line) => line.slice(1, -1).split(' | ').map((cell) => cell.trim()));
}

describePage('migrating-from-cfssl.md', MIGRATING, {
  after: (state) => {
    it('maps every cfssl serve flag to a flag certsmith serve has', async () => {
      const help = spawnCertsmith(['serve', '--help']);
      await help.waitForExit(20_000);
      const known = new Set(help.lines.join('\n').match(/--[a-z-]+/g));
      const mapped = tableRows(MIGRATING, '## `cfssl serve` flags').flatMap(([cfssl, certsmith]) => {
        const column = certsmith!.startsWith('same') ? cfssl! : certsmith!;
        return [...column.matchAll(/`(--?[a-z][a-z-]*)/g)].map((match) => `--${match[1]!.replace(/^--?/, '')}`);
      });
      expect(mapped.length).toBeGreaterThan(20);
      expect(mapped.filter((flag) => !known.has(flag))).toEqual([]);
    });

    it('serves the endpoints marked ✓ and answers 404 for those marked 404', async () => {
      // The first server of the page: cfssl's config with profiles with and without an auth key.
      const { url } = state().certsmiths[0]!;
      let checked = 0;
      for (const [endpoints, certsmith] of tableRows(MIGRATING, '## `cfssl serve` endpoints')) {
        const column = endpoints === '–' ? certsmith! : endpoints!;
        const paths = [...column.matchAll(/`(?:(?:GET|POST) )?([^`]+)`/g)].map((match) => match[1]!.replace('<endpoint>', 'info')).map((path) => (path.startsWith('/') ? path : `/api/v1/cfssl/${path}`));
        const served = endpoints === '–' || certsmith!.startsWith('✓');
        // The row's method (`GET scan`, `scaninfo`); CFSSL's endpoints without one take POST.
        const body = column.includes('`GET ') ? undefined : {};
        for (const path of paths) {
          const reply = await request(url, path, body);
          if (served) expect(reply.status, `${path} should be served`).not.toBe(404);
          else expect(reply.status, `${path} should be 404`).toBe(404);
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThan(15);
    });
  },
});

describePage('deploy.md', DEPLOY, {
  operatorEnv: OPERATOR_ENV,
  after: (state) => {
    it('the unit, its setup steps and the environment file agree', async () => {
      const { sandbox, unit } = state();
      const calls = await readFile(join(sandbox.dir, 'calls.log'), 'utf8');
      const user = /^useradd .* (\S+)$/m.exec(calls)?.[1];
      expect([unit!.settings['Service.User'], unit!.settings['Service.Group']]).toEqual([user, user]);
      const owners = calls.split('\n').filter((line) => line.startsWith('install ')).flatMap((line) => [...line.matchAll(/ -[og] (\S+)/g)].map((match) => match[1]));
      expect(owners.filter((owner) => owner !== 'root' && owner !== user)).toEqual([]);
      expect(flagValue(unit!.execStart, 'data-dir')).toBe(`/var/lib/${unit!.settings['Service.StateDirectory']}`);
      expect(unit!.settings['Service.EnvironmentFile']).toBe(/^# (\S+)/.exec(markedBlocks(DEPLOY).find((block) => has(block, 'env-file'))!.body)![1]);
      // Every file ExecStart names was put in place by the page's steps.
      const files = unit!.execStart.filter((word) => word.startsWith('/etc/'));
      expect(files.length).toBeGreaterThan(3);
      expect(files.filter((file) => !existsSync(inSandbox(sandbox, file)))).toEqual([]);
    });

    it('RestartPreventExitStatus lists the exit codes of a bad file (1) and of a signer that cannot load (2)', async () => {
      const { sandbox, unit } = state();
      const env = { ...sandbox.env, ...systemdEnvironment(await readFile(unit!.envFile, 'utf8')) };
      const args = localServeArgs(sandbox, unit!.execStart.slice(1));
      const broken = join(sandbox.dir, 'broken.json');
      await writeFile(broken, JSON.stringify({ signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'missing-key.pem' } } } }));
      const codes = [];
      for (const variant of [withFlag(args, 'ca-bundle', join(sandbox.dir, 'missing.crt')), withFlag(args, 'config', broken)]) {
        const started = spawnCertsmith(variant, env);
        codes.push((await started.waitForExit(30_000)).code);
      }
      expect(codes).toEqual([1, 2]);
      expect(unit!.settings['Service.RestartPreventExitStatus']!.split(/\s+/).map(Number)).toEqual(codes);
    });

    it('logs the development-CA warning the page tells operators to alert on, and the unit does not', async () => {
      const warning = /the warning `([^`]+)`/.exec(DEPLOY)![1]!;
      expect(MIGRATING, 'both pages name the same warning').toContain(`\`${warning}\` warning`);
      const { sandbox } = state();
      const dev = await startServe(['serve', '--port', '0', '--workers', '1', '--data-dir', join(sandbox.dir, 'dev-data')], sandbox.env);
      await dev.process.waitForLine((line) => line.includes(warning), 20_000);
      await stopServe(dev, 30_000);
      expect(await readFile(join(sandbox.dir, 'systemd', 'journal'), 'utf8')).not.toContain(warning);
    });
  },
});
