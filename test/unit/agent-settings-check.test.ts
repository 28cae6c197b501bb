/** A policy or budget value that is not allowed fails when the agent is defined (the worker's start), naming the agent and the field. */
import { defineAgent } from '../../src/agents/define-agent';
import { DEFAULT_BUDGETS } from '../../src/protocol/agent-settings';

const base = { name: 'reader', system: 's', tools: [] };
const define = (extra: Record<string, unknown>) => () => defineAgent({ ...base, ...(extra as object) });

test.each([
  [{ policy: { write: 'bogus' } }, /^Agent "reader": policy\.write must be one of 'allow', 'confirm', 'deny', 'auto', got "bogus"$/],
  [{ policy: { destructive: 'ALLOW' } }, /policy\.destructive must be one of 'allow', 'confirm', 'deny', 'auto', got "ALLOW"/],
  [{ policy: { write: 'auto', autoRules: 'be careful' } }, /policy\.autoRules must be an array of one-line rules, got "be careful"/],
  [{ policy: { write: 'auto', autoRules: ['ok', ''] } }, /policy\.autoRules\[1\] must be one non-empty line of at most 500 characters/],
  [{ policy: { write: 'auto', autoRules: ['two\nlines'] } }, /policy\.autoRules\[0\] must be one non-empty line/],
  [{ policy: { write: 'auto', classifier: 'model' } }, /policy\.classifier must be a function \(call\) => \{ verdict, reason \}, got "model"/],
  [{ policy: { write: 'confirm', autoRules: ['no deletes'] } }, /^Agent "reader": policy\.autoRules is set, but no rule is 'auto' \(write, destructive or a tool's\): nothing would consult it$/],
  [{ policy: { classifier: () => ({ verdict: 'allow', reason: 'x' }) } }, /policy\.classifier is set, but no rule is 'auto'/],
  [{ policy: { destructive: 'auto', forbidSelfApproval: true } }, /policy\.forbidSelfApproval asks for a second person on every call, and an 'auto' rule lets a classifier allow/],
  [{ policy: { write: 'auto', autoRule: ['x'] } }, /policy has no field "autoRule" \(its fields: .*autoRules, classifier\)/],
  [{ policy: { tools: { delete_file: 'never' } } }, /policy\.tools\.delete_file must be one of/],
  [{ policy: { tools: ['deny'] } }, /policy\.tools must be an object of tool name to rule/],
  [{ policy: { onExpiry: 'allow' } }, /policy\.onExpiry must be 'deny' or 'block', got "allow"/],
  [{ policy: { approvalTimeoutMs: -5 } }, /policy\.approvalTimeoutMs must be a positive integer/],
  [{ policy: { forbidSelfApproval: 'yes' } }, /policy\.forbidSelfApproval must be true or false/],
  [{ policy: { wirte: 'allow' } }, /policy has no field "wirte" \(its fields: write, destructive,/],
  [{ policy: 'allow' }, /policy must be an object/],
  [{ budgets: { toolCalls: 0 } }, /^Agent "reader": budgets\.toolCalls must be an integer from 1 to 1000000, got number 0$/],
  [{ budgets: { toolCalls: 2.5 } }, /budgets\.toolCalls must be an integer/],
  [{ budgets: { costUsd: -1 } }, /budgets\.costUsd must be a positive number/],
  [{ budgets: { turns: '10' } }, /budgets\.turns must be an integer/],
  [{ budgets: { toolcalls: 200 } }, /^Agent "reader": budgets: unknown field toolcalls/],
  [{ budgets: 100 }, /budgets needs an object/],
])('%j is a TypeError naming the agent and the field', (extra, message) => {
  expect(define(extra)).toThrow(TypeError);
  expect(define(extra)).toThrow(message);
});

test('every allowed value loads, and the budgets reach the manifest', () => {
  const agent = defineAgent({
    ...base,
    policy: { write: 'allow', destructive: 'deny', tools: { a: 'confirm' }, approvalTimeoutMs: 60_000, onExpiry: 'block', forbidSelfApproval: false, approvers: { write: ['alice'] } },
    budgets: { ...DEFAULT_BUDGETS, toolCalls: 400, costUsd: 2.5, tokens: 1_000_000 },
  });
  expect(agent.manifest({ provider: 'scripted', script: 'x.json' }).budgets).toMatchObject({ toolCalls: 400, costUsd: 2.5 });
});

test("auto loads for write, for destructive only when named, and per tool; the agent's classifier function stays on the worker", () => {
  const classifier = () => ({ verdict: 'ask' as const, reason: 'always a person' });
  const agent = defineAgent({ ...base, policy: { write: 'auto', destructive: 'auto', tools: { a: 'auto' }, autoRules: ['No refunds over 100 EUR.'], classifier } });
  expect(agent.policy?.classifier).toBe(classifier);
  const manifest = agent.manifest({ provider: 'scripted', script: 'x.json' });
  expect(manifest.policy).toEqual({ write: 'auto', destructive: 'auto', tools: { a: 'auto' }, autoRules: ['No refunds over 100 EUR.'] });
  expect(JSON.parse(JSON.stringify(manifest)).policy).toEqual(manifest.policy);
});
