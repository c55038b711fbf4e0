// URLs in logs keep origin and word-like path segments; a token in the query, the userinfo or the path is not shown.
import { describe, expect, it } from 'vitest';
import { urlForLog, urlHasSecrets } from '../../../src/log/url-for-log.js';

describe('urlForLog', () => {
  it('drops query and userinfo; replaces token-like path segments (QuickNode, Triton shapes)', () => {
    expect(urlForLog('https://mainnet.helius-rpc.com/?api-key=3e8b5d1f-7a2c')).toBe('https://mainnet.helius-rpc.com/');
    expect(urlForLog('https://u:p@rpc.example.com/solana')).toBe('https://rpc.example.com/solana');
    expect(urlForLog('https://x.solana-mainnet.quiknode.pro/0123456789abcdef0123456789abcdef01234567/')).toBe('https://x.solana-mainnet.quiknode.pro/(token)/');
    expect(urlForLog('https://acme.rpcpool.com/3e8b5d1f-7a2c-4f9e-b6d0-1c4a7e2b9f53')).toBe('https://acme.rpcpool.com/(token)');
    expect(urlForLog('wss://api.example.com/v1/ws')).toBe('wss://api.example.com/v1/ws');
  });

  it('urlHasSecrets says so for each of those carriers', () => {
    expect(urlHasSecrets('https://acme.rpcpool.com/3e8b5d1f-7a2c-4f9e-b6d0-1c4a7e2b9f53')).toBe(true);
    expect(urlHasSecrets('https://rpc.example.com/?k=1')).toBe(true);
    expect(urlHasSecrets('https://rpc.example.com/solana')).toBe(false);
  });
});
