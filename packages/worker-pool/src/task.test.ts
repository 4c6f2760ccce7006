import { describe, expect, it } from 'vitest';
import { defineTask, isTaskDefinition, resolveBuiltModule } from './task.js';

describe('defineTask', () => {
  it('returns a frozen definition recognised by isTaskDefinition', () => {
    const task = defineTask({ name: 'certinfo', module: new URL('file:///x/dist/a.js'), run: (n: number) => n + 1 });
    expect(task.name).toBe('certinfo');
    expect(task.module).toBe('file:///x/dist/a.js');
    expect(Object.isFrozen(task)).toBe(true);
    expect(isTaskDefinition(task)).toBe(true);
    expect(isTaskDefinition({ name: 'certinfo', run: () => 1 })).toBe(false);
  });

  it('keeps readsInputOnly, false unless the spec says true', () => {
    expect(defineTask({ name: 'a', module: 'x', run: () => 1 }).readsInputOnly).toBe(false);
    expect(defineTask({ name: 'a', module: 'x', run: () => 1, readsInputOnly: true }).readsInputOnly).toBe(true);
  });

  it('rejects names that are not lower-case identifiers', () => {
    expect(() => defineTask({ name: 'Bundle', module: 'x', run: () => 1 })).toThrow(TypeError);
  });
});

describe('resolveBuiltModule', () => {
  it('maps a src TypeScript URL to its dist JavaScript file', () => {
    expect(resolveBuiltModule('file:///repo/packages/issuer/src/newcert-task.ts')).toBe(
      'file:///repo/packages/issuer/dist/newcert-task.js',
    );
    expect(resolveBuiltModule('file:///repo/packages/issuer/src/tasks/sign.mts')).toBe(
      'file:///repo/packages/issuer/dist/tasks/sign.js',
    );
  });

  it('leaves built files, other URLs and package specifiers unchanged', () => {
    expect(resolveBuiltModule('file:///repo/packages/issuer/dist/newcert-task.js')).toBe(
      'file:///repo/packages/issuer/dist/newcert-task.js',
    );
    expect(resolveBuiltModule('@certsmith/issuer/tasks')).toBe('@certsmith/issuer/tasks');
    expect(resolveBuiltModule('data:text/javascript,export default 1')).toBe('data:text/javascript,export default 1');
  });
});
