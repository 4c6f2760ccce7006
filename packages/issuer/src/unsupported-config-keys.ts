/**
 * Keys of CFSSL's configuration schema that certsmith does not implement, and what it does with each
 * (issue 19: nothing is silently ignored). The rule: a key whose value would change what CFSSL
 * issues (or where it issues) is a problem — start-up and `config check` stop with exit 2 naming its
 * JSON path; a key whose value changes nothing issued is a warning. Every other key of the schema
 * (`cfssl-config-schema.ts`) is implemented.
 */
import type { ConfigReport } from './config-problems.js';
import type { RawCfsslConfig, RawProfile } from './cfssl-config-schema.js';
import { LINT_STATUS_LABELS } from './cfssl-config-schema.js';

/** Where a key lives and what certsmith does with it (the table of docs/configuration.md). */
export interface UnsupportedCfsslKey {
  /** The key as CFSSL spells it (Go matches it case-insensitively). */
  readonly key: string;
  /** `profile`: in `signing.default` or `signing.profiles.<name>`; `config`: top level. */
  readonly scope: 'profile' | 'config';
  /** When the key stops start-up; `never` = always a warning. */
  readonly refusedWhen: string;
}

/** Every CFSSL key certsmith does not implement. */
export const UNSUPPORTED_CFSSL_KEYS: readonly UnsupportedCfsslKey[] = [
  { key: 'ct_log_servers', scope: 'profile', refusedWhen: 'it lists a log (CFSSL submits a precertificate and embeds the SCTs)' },
  { key: 'lint_error_level', scope: 'profile', refusedWhen: 'it is not "reserved" (CFSSL refuses certificates that zlint flags)' },
  { key: 'ignored_lints', scope: 'profile', refusedWhen: 'never (it only narrows linting)' },
  { key: 'ignored_lint_sources', scope: 'profile', refusedWhen: 'it names a source zlint does not know (CFSSL refuses the file too)' },
  { key: 'cert_store', scope: 'profile', refusedWhen: 'never (CFSSL does not read it either)' },
  { key: 'Expiry', scope: 'profile', refusedWhen: 'never (CFSSL overwrites it from expiry)' },
  { key: 'Backdate', scope: 'profile', refusedWhen: 'it is not 0 and backdate is not set (CFSSL backdates by it)' },
  { key: 'RemoteServer', scope: 'profile', refusedWhen: 'it is set on a profile without remote/auth_remote (CFSSL sends the request there)' },
  { key: 'NameWhitelist', scope: 'profile', refusedWhen: 'it is set and name_whitelist is not (CFSSL would use it)' },
  { key: 'ExtensionWhitelist', scope: 'profile', refusedWhen: 'never (CFSSL rebuilds it from allowed_extensions)' },
  { key: 'RemoteCAs', scope: 'profile', refusedWhen: 'never (TLS to remote CAs, which a policy never reaches in certsmith)' },
  { key: 'ClientCert', scope: 'profile', refusedWhen: 'never (TLS to remote CAs, which a policy never reaches in certsmith)' },
  { key: 'Provider', scope: 'profile', refusedWhen: 'it is not null (CFSSL cannot decode it and refuses the file)' },
  { key: 'PrevProvider', scope: 'profile', refusedWhen: 'it is not null (CFSSL cannot decode it and refuses the file)' },
  { key: 'RemoteProvider', scope: 'profile', refusedWhen: 'it is not null (CFSSL cannot decode it and refuses the file)' },
  { key: 'LintRegistry', scope: 'profile', refusedWhen: 'it is not null (CFSSL cannot decode it and refuses the file)' },
  { key: 'ocsp', scope: 'config', refusedWhen: 'never (CFSSL does not read it either; OCSP signing takes -responder flags)' },
];

/** zlint lint sources CFSSL's `populate` accepts in `ignored_lint_sources` (`lint.LintSource.FromString`). */
const LINT_SOURCES: ReadonlySet<string> = new Set(['RFC5280', 'RFC5480', 'RFC5891', 'CABF_BR', 'CABF_EV', 'Mozilla', 'Apple', 'Community', 'ETSI_ESI']);

const IGNORED = 'certsmith ignores it';

/**
 * Classify the unsupported keys present in one profile. `report` is the profile's view
 * (`signing.profiles.www`); `isRemote` = the profile has `remote` or `auth_remote.remote`.
 */
export function checkUnsupportedProfileKeys(raw: RawProfile, isRemote: boolean, report: ConfigReport): void {
  if (raw.ctLogServers !== null) {
    const logs = raw.ctLogServers.value ?? [];
    if (logs.length > 0) {
      report.problem(
        [raw.ctLogServers.key],
        `certsmith does not submit to Certificate Transparency logs: CFSSL would submit a precertificate to ${logs.length === 1 ? 'this log' : `these ${logs.length} logs`} and embed the SCTs in every certificate of this profile; remove ct_log_servers, or keep CFSSL for this profile`,
      );
    } else {
      report.warning([raw.ctLogServers.key], `lists no log, so nothing is submitted; ${IGNORED}`);
    }
  }
  if (raw.lintErrorLevel !== null) {
    const level = raw.lintErrorLevel.value;
    if (level > 0) {
      const label = Object.keys(LINT_STATUS_LABELS).find((name) => LINT_STATUS_LABELS[name] === level) ?? String(level);
      report.problem(
        [raw.lintErrorLevel.key],
        `certsmith does not lint certificates before issuing them: CFSSL would run zlint and refuse every certificate with a result at or above "${label}"; remove lint_error_level (or set it to "reserved"), or keep CFSSL for this profile`,
      );
    } else {
      report.warning([raw.lintErrorLevel.key], `"reserved" turns pre-issuance linting off, as certsmith does not lint; ${IGNORED}`);
    }
  }
  if (raw.ignoredLints !== null) {
    report.warning([raw.ignoredLints.key], `excludes lints from pre-issuance linting, which certsmith does not do (see lint_error_level); ${IGNORED}`);
  }
  const lintSources = raw.ignoredLintSources;
  if (lintSources !== null) {
    let unknown = false;
    (lintSources.value ?? []).forEach((source, index) => {
      if (LINT_SOURCES.has(source.trim())) return;
      unknown = true;
      report.problem([lintSources.key, index], `failed to build excluded lint source list: unknown source ${JSON.stringify(source)} (zlint knows ${[...LINT_SOURCES].join(', ')})`);
    });
    if (!unknown) report.warning([lintSources.key], `excludes lint sources from pre-issuance linting, which certsmith does not do (see lint_error_level); ${IGNORED}`);
  }
  if (raw.certStore !== null) {
    report.warning([raw.certStore.key], `CFSSL does not read it either (certificates are stored through -db-config); ${IGNORED}`);
  }
  if (raw.goExpiry !== null) {
    report.warning([raw.goExpiry.key], `Go's parsed form of expiry (nanoseconds): CFSSL overwrites it from expiry; ${IGNORED}`);
  }
  if (raw.goBackdate !== null) {
    if (raw.goBackdate.value !== 0 && raw.backdateString === '' && !isRemote) {
      report.problem(
        [raw.goBackdate.key],
        `Go's parsed form of backdate (nanoseconds): with backdate unset, CFSSL would backdate certificates by ${raw.goBackdate.value} ns; write it as a duration, e.g. "backdate": "1h"`,
      );
    } else {
      report.warning([raw.goBackdate.key], `Go's parsed form of backdate: CFSSL ${isRemote ? 'does not use it for a remote profile' : 'overwrites it from backdate'}; ${IGNORED}`);
    }
  }
  if (raw.remoteServer !== null) {
    if (raw.remoteServer.value !== '' && !isRemote) {
      report.problem(
        [raw.remoteServer.key],
        `Go's resolved form of remote: CFSSL would send this profile's requests to ${JSON.stringify(raw.remoteServer.value)}; certsmith reaches remote CAs through a @certsmith/signer-multiroot signer — remove RemoteServer`,
      );
    } else {
      report.warning([raw.remoteServer.key], `Go's resolved form of remote: CFSSL ${isRemote ? 'overwrites it from remotes' : 'does nothing with an empty one'}; ${IGNORED}`);
    }
  }
  if (raw.goNameWhitelist !== null) {
    if (raw.nameWhitelistString === '') {
      report.problem([raw.goNameWhitelist.key], 'Go\'s compiled form of name_whitelist, which CFSSL would use as it is; write the pattern as "name_whitelist"');
    } else {
      report.warning([raw.goNameWhitelist.key], `Go's compiled form of name_whitelist: CFSSL overwrites it from name_whitelist; ${IGNORED}`);
    }
  }
  if (raw.extensionWhitelist !== null) {
    report.warning([raw.extensionWhitelist.key], `Go's form of allowed_extensions: CFSSL rebuilds it from allowed_extensions; ${IGNORED}`);
  }
  if (raw.remoteCas !== null) {
    report.warning([raw.remoteCas.key], `TLS trust for requests to a remote CA, which certsmith never sends from a signing policy (a @certsmith/signer-multiroot signer has its own caFile); ${IGNORED}`);
  }
  if (raw.clientCert !== null) {
    report.warning([raw.clientCert.key], `TLS client certificate for requests to a remote CA, which certsmith never sends from a signing policy (a @certsmith/signer-multiroot signer has its own certFile/keyFile); ${IGNORED}`);
  }
  // Provider, PrevProvider, RemoteProvider, LintRegistry: any value but null already failed to decode.
}

/** Classify the unsupported top-level keys (`report` = the document's view). */
export function checkUnsupportedConfigKeys(raw: RawCfsslConfig, report: ConfigReport): void {
  if (raw.ocsp !== null) {
    report.warning([raw.ocsp.key], `CFSSL does not read it either (its OCSP signer takes -responder and -responder-key); ${IGNORED}`);
  }
}
