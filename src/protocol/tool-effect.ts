/** What a tool does to the world; the permission policy and approvers are read per effect. */
export type ToolEffect = 'read' | 'write' | 'destructive';
