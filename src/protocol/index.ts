export * from './messages';
export * from './tool-error';
export * from './task';
export * from './definitions';
export * from './agent-manifest';
export * from './activity-contracts';
export * from './delegation';
export * from './fork';
