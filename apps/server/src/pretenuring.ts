/**
 * V8's allocation-site pretenuring, turned off for the whole process by `serve` (before its worker
 * pool starts) and by every `ocspserve` responder process.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Turn off V8's allocation-site pretenuring for this process.
 * Why: V8 (11.3, Node 20) decides to allocate the objects of an allocation site directly in the
 * old generation once most of them survive a young-generation GC. certsmith's young generations are
 * small (`--max-semi-space-size`, the workers' `maxYoungGenerationSizeMb`), and a batch of tasks or
 * a turn of answers keeps its requests' objects alive over a few hundred microseconds, so
 * request-scoped objects (parsed names, certificates, OCSP answers) were judged long-lived and went
 * to the old generation: in `ocspserve` a full GC about every second at 40,000 answers/s, with
 * 14–20 ms pauses (see docs/performance.md#no-allocation-site-pretenuring). Newer V8 skips these
 * decisions for small young generations for the same reason. Nothing certsmith keeps is allocated
 * per request, so there is nothing for pretenuring to win. The flag is read at each GC, so setting
 * it at run time takes effect (Node's `v8.setFlagsFromString`).
 */
export function turnOffPretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
