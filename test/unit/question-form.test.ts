/**
 * A tool's question as a form: which schemas get one field per property, which fall back to a JSON
 * answer, and how a posted form becomes the answer (the task checks it; this only shapes it).
 */
import { answerFromForm, defaultAnswer, questionFields } from '../../src/inbox/question-form';

const flat = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', description: 'Your name', maxLength: 40 },
    age: { type: 'integer', minimum: 0 },
    ok: { type: 'boolean', default: false },
    pet: { type: 'string', enum: ['cat', 'dog'], enumNames: ['Cat', 'Dog'] },
    hero: { type: 'string', oneOf: [{ const: 'h1', title: 'Superman' }] },
    tools: { type: 'array', items: { type: 'string', enum: ['saw', 'drill'] }, default: ['saw'] },
  },
  required: ['name'],
};

test('a flat object of primitives gets one field per property, in order, with its kind, options, limits and required flag', () => {
  const fields = questionFields(flat)!;
  expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
    ['name', 'string', true],
    ['age', 'integer', false],
    ['ok', 'boolean', false],
    ['pet', 'choice', false],
    ['hero', 'choice', false],
    ['tools', 'choices', false],
  ]);
  expect(fields[0]).toMatchObject({ title: 'Name', description: 'Your name', maxLength: 40 });
  expect(fields[3]!.options).toEqual([
    { value: 'cat', label: 'Cat (cat)' },
    { value: 'dog', label: 'Dog (dog)' },
  ]);
  expect(fields[4]!.options).toEqual([{ value: 'h1', label: 'Superman (h1)' }]);
  expect(fields[5]!.defaultValue).toEqual(['saw']);
});

test('a nested object, an array of objects, a union type or a non-object schema falls back to a JSON answer', () => {
  expect(questionFields({ type: 'object', properties: { address: { type: 'object', properties: {} } } })).toBeUndefined();
  expect(questionFields({ type: 'object', properties: { items: { type: 'array', items: { type: 'object' } } } })).toBeUndefined();
  expect(questionFields({ type: 'object', properties: { x: { type: ['string', 'null'] } } })).toBeUndefined();
  expect(questionFields({ type: 'string' })).toBeUndefined();
  expect(questionFields({ type: 'object' })).toEqual([]);
  expect(defaultAnswer({ type: 'object', properties: { a: { type: 'object', default: { b: 1 } }, c: { type: 'string' } } })).toEqual({ a: { b: 1 } });
});

test('a posted form becomes the answer: empty fields left out, numbers and yes/no as JSON values, ticked choices as a list, anything unreadable passed on as typed', () => {
  const form = new URLSearchParams([
    ['answer.name', 'Ada'],
    ['answer.age', 'forty'],
    ['answer.ok', 'true'],
    ['answer.pet', ''],
    ['answer.tools', 'saw'],
    ['answer.tools', 'drill'],
    ['answer.unknown', 'ignored'],
    ['approvalId', 'a1'],
  ]);
  expect(answerFromForm(flat, form)).toEqual({ value: { name: 'Ada', age: 'forty', ok: true, tools: ['saw', 'drill'] } });
  expect(answerFromForm(flat, new URLSearchParams([['answer.age', ' 41 ']]))).toEqual({ value: { age: 41 } });
});

test('a JSON answer must be a JSON object; an empty box is an empty answer', () => {
  const nested = { type: 'object', properties: { address: { type: 'object' } } };
  expect(answerFromForm(nested, new URLSearchParams([['answerJson', '{"address": {"city": "Paris"}}']]))).toEqual({ value: { address: { city: 'Paris' } } });
  expect(answerFromForm(nested, new URLSearchParams([['answerJson', '']]))).toEqual({ value: {} });
  expect(answerFromForm(nested, new URLSearchParams([['answerJson', '[1]']]))).toMatchObject({ error: expect.stringContaining('must be a JSON object') });
  expect(answerFromForm(nested, new URLSearchParams([['answerJson', '{oops']]))).toMatchObject({ error: expect.stringContaining('not valid JSON') });
});
