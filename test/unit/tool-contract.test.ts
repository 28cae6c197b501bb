/** What an approval binds (src/rules/tool-contract.ts): the tool as asked about, and the difference a later worker names. */
import type { ToolManifest } from '../../src/protocol/agent-manifest';
import { contractDifference, staleApprovalError, toolContractOf } from '../../src/rules/tool-contract';

const refund: ToolManifest = {
  name: 'refund',
  description: 'Refunds an order.',
  inputSchema: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order'] },
  effect: 'write',
  idempotent: false,
  timeoutMs: 30_000,
  maxAttempts: 1,
  fallbacks: [],
  cacheTtlMs: 0,
};
const withSchema = (inputSchema: Record<string, unknown>): ToolManifest => ({ ...refund, inputSchema });

test('the same tool under the same policy is the same contract; worker settings such as timeouts are not part of it', () => {
  const contract = toolContractOf(refund, {});
  expect(contract).toMatchObject({ fields: ['amount?', 'order'], effect: 'write', idempotent: false, rule: 'confirm' });
  expect(toolContractOf(structuredClone(refund), {})).toEqual(contract);
  expect(toolContractOf({ ...refund, timeoutMs: 5_000, maxAttempts: 3 }, {}).hash).toBe(contract.hash);
  expect(contractDifference(contract, toolContractOf(refund, {}))).toEqual([]);
});

test.each([
  ['a new required field', withSchema({ ...refund.inputSchema, properties: { order: {}, amount: {}, reason: {} }, required: ['order', 'reason'] }), {}, ['input fields +reason']],
  ['a field made required', withSchema({ ...refund.inputSchema, required: ['order', 'amount'] }), {}, ['input fields +amount -amount?']],
  ['a field type', withSchema({ ...refund.inputSchema, properties: { order: { type: 'string' }, amount: { type: 'string' } } }), {}, ['input schema changed (same top-level fields)']],
  ['the effect', { ...refund, effect: 'destructive' as const }, {}, ['effect write -> destructive']],
  ['the policy rule', refund, { tools: { refund: 'allow' as const } }, ['policy rule confirm -> allow']],
  ['the description', { ...refund, description: 'Refunds an order in full.' }, {}, ['description changed']],
])('%s is named as the difference', (_what, after, policy, changes) => {
  expect(contractDifference(toolContractOf(refund, {}), toolContractOf(after, policy))).toEqual(changes);
});

test('an approval without a contract (older histories) is not refused; one with a different contract is, naming who approved and what changed', () => {
  const before = toolContractOf(refund, {});
  const after = toolContractOf({ ...refund, effect: 'destructive' }, {});
  expect(staleApprovalError('refund', { by: 'ana' }, after)).toBeUndefined();
  expect(staleApprovalError('refund', { by: 'ana', contract: before }, before)).toBeUndefined();
  expect(staleApprovalError('refund', { by: 'ana', contract: before }, after)).toMatchObject({
    error_class: 'policy',
    code: 'decision_stale',
    detail: 'refund changed after ana approved this call (effect write -> destructive); it did not run on that approval.',
  });
});
