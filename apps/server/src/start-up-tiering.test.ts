import { describe, expect, it } from 'vitest';
import { START_UP_BUDGET_FACTOR, V8_11_3_INTERRUPT_BUDGET, startUpInterruptBudget } from './start-up-tiering.js';

describe('startUpInterruptBudget', () => {
  it('raises V8 11.3 budget by the start-up factor', () => {
    expect(startUpInterruptBudget('11.3.244.8-node.38', ['--max-semi-space-size=4'])).toBe(V8_11_3_INTERRUPT_BUDGET * START_UP_BUDGET_FACTOR);
  });

  it('leaves another V8 as it is', () => {
    expect(startUpInterruptBudget('12.4.254.21-node.33', [])).toBeUndefined();
    expect(startUpInterruptBudget('11.8.172.17-node.16', [])).toBeUndefined();
  });

  it('leaves a budget given on the command line as it is', () => {
    expect(startUpInterruptBudget('11.3.244.8-node.38', ['--interrupt-budget=1000'])).toBeUndefined();
    expect(startUpInterruptBudget('11.3.244.8-node.38', ['--interrupt-budget', '1000'])).toBeUndefined();
  });
});
