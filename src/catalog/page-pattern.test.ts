import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  matchPageMappings, matchesPagePattern, pagePatternProblem, pagePatternSchema, pagePatternSpecificity, parsePagePattern,
} from './page-pattern.ts';

describe('page patterns (seed 001 §5.3)', () => {
  it('parses the four modes and the catch-all', () => {
    assert.deepEqual(parsePagePattern('deals'), { mode: 'exact', text: 'deals' });
    assert.deepEqual(parsePagePattern('deals*'), { mode: 'prefix', text: 'deals' });
    assert.deepEqual(parsePagePattern('*deals'), { mode: 'suffix', text: 'deals' });
    assert.deepEqual(parsePagePattern('*deals*'), { mode: 'contains', text: 'deals' });
    assert.deepEqual(parsePagePattern('*'), { mode: 'prefix', text: '' });
  });

  it('matches exact pages only exactly, case-sensitively', () => {
    assert.equal(matchesPagePattern('deals', 'deals'), true);
    assert.equal(matchesPagePattern('deals', 'deals/42'), false);
    assert.equal(matchesPagePattern('deals', 'my-deals'), false);
    assert.equal(matchesPagePattern('deals', 'Deals'), false);
  });

  it('matches prefix, suffix and contains patterns', () => {
    assert.equal(matchesPagePattern('deals*', 'deals/42'), true);
    assert.equal(matchesPagePattern('deals*', 'deals'), true);
    assert.equal(matchesPagePattern('deals*', 'my-deals'), false);
    assert.equal(matchesPagePattern('*-settings', 'org-settings'), true);
    assert.equal(matchesPagePattern('*-settings', 'org-settings/x'), false);
    assert.equal(matchesPagePattern('*contact*', 'crm/contacts/list'), true);
    assert.equal(matchesPagePattern('*contact*', 'contact'), true);
    assert.equal(matchesPagePattern('*contact*', 'companies'), false);
    assert.equal(matchesPagePattern('*', 'anything at all'), true);
  });

  it('rejects stars in the middle and "**"', () => {
    assert.match(pagePatternProblem('de*als') ?? '', /only start or end/);
    assert.match(pagePatternProblem('**') ?? '', /no meaning/);
    assert.match(pagePatternProblem('***') ?? '', /only start or end/);
    assert.match(pagePatternProblem('') ?? '', /empty/);
    assert.equal(pagePatternProblem('*a*'), undefined);
    assert.equal(pagePatternSchema.safeParse('a*b').success, false);
    assert.equal(pagePatternSchema.safeParse('a*').success, true);
  });

  it('ranks exact over prefix/suffix over contains, longer literals first', () => {
    assert.ok(pagePatternSpecificity('deals') > pagePatternSpecificity('deals*'));
    assert.ok(pagePatternSpecificity('deals*') > pagePatternSpecificity('*deals*'));
    assert.ok(pagePatternSpecificity('deals/pipeline*') > pagePatternSpecificity('deals*'));
    assert.equal(pagePatternSpecificity('deals*'), pagePatternSpecificity('*deals'));
  });

  it('orders matches by priority, then specificity, and keeps each category once', () => {
    const mappings = [
      { id: 'a', pagePattern: '*deal*', categoryId: 'crm', priority: 5 },
      { id: 'b', pagePattern: 'deals', categoryId: 'deals', priority: 1 },
      { id: 'c', pagePattern: 'deals*', categoryId: 'analytics', priority: 1 },
      { id: 'd', pagePattern: 'deals', categoryId: 'crm', priority: 0 },
      { id: 'e', pagePattern: 'contacts', categoryId: 'contacts', priority: 99 },
      { id: 'f', pagePattern: '*', categoryId: 'general', priority: -1 },
    ];
    assert.deepEqual(matchPageMappings(mappings, 'deals').map((m) => m.id), ['a', 'b', 'c', 'f']);
    assert.deepEqual(matchPageMappings(mappings, 'contacts').map((m) => m.id), ['e', 'f']);
    assert.deepEqual(matchPageMappings(mappings.slice(0, 5), 'nothing'), []);
  });
});
