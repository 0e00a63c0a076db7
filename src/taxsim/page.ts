/**
 * The page a person opens to see what the reference tax authority received: one row per report, newest first. Every
 * value is escaped; the page loads nothing else (no scripts, inline style only).
 */
import type { Ledger, ReportRecord } from './ledger';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const cell = (v: string | undefined): string => `<td>${escapeHtml(v ?? '')}</td>`;

const TYPE_NAMES: Record<string, string> = { S: 'submit', R: 'resubmit', D: 'disregard' };

function matchText(ledger: Ledger, r: ReportRecord): string {
  const m = ledger.matchOf(r);
  if (!m) return '';
  if (m.status === 'differs')
    return `differs in ${m.differences.length}: ${m.differences
      .slice(0, 3)
      .map((d) => d.term ?? d.path)
      .join(', ')}${m.differences.length > 3 ? ', …' : ''}`;
  return m.status;
}

function row(ledger: Ledger, r: ReportRecord): string {
  const f = r.facts;
  const reasons = r.reasons.map((x) => `${x.reasonCode}${x.ruleId ? ` ${x.ruleId}` : ''}`).join(', ');
  const verdict = r.duplicateOf ? `${r.verdict} (repeat of ${r.duplicateOf})` : r.verdict;
  return (
    `<tr class="${r.verdict}">` +
    `<td><a href="api/reports/${encodeURIComponent(r.id)}">${escapeHtml(r.id)}</a></td>` +
    cell(r.receivedAt.toISOString()) +
    cell(r.channel) +
    cell(f?.role) +
    cell(f ? `${f.typeCode}${TYPE_NAMES[f.typeCode] ? ` (${TYPE_NAMES[f.typeCode]})` : ''}` : r.unreadable) +
    cell(f?.invoiceUuid) +
    cell(f?.invoiceNumber) +
    cell(f?.sellerVat) +
    cell(f?.buyerVat) +
    cell(verdict) +
    cell(`${r.mls?.responseCode ?? ''}${reasons ? `: ${reasons}` : ''}`) +
    cell(r.mls?.delivery) +
    cell(matchText(ledger, r)) +
    '</tr>'
  );
}

export function renderPage(
  ledger: Ledger,
  info: { participants: Record<string, string>; as4Url: string | undefined; fault: string },
): string {
  const reports = ledger.list();
  const participants = Object.entries(info.participants)
    .map(([cc, p]) => `${escapeHtml(cc)} ${escapeHtml(p)}`)
    .join('; ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>taxsim: reference tax authority</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;font-size:.85em}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
tr.rejected{background:#fde8e8}tr.accepted{background:#eefbe8}code{font-size:.95em}
</style></head><body>
<h1>taxsim: reference tax authority (C5)</h1>
<p>A simulator for tests: it keeps everything in memory and forgets it when restarted.
Participants: ${participants || 'none'}. AS4: <code>${escapeHtml(info.as4Url ?? 'not configured')}</code>.
Fault: <code>${escapeHtml(info.fault)}</code>. ${reports.length} report(s); JSON at <a href="api/reports">api/reports</a>.</p>
<table><thead><tr><th>#</th><th>Received</th><th>Via</th><th>Role</th><th>Type</th><th>Invoice UUID</th>
<th>Invoice number</th><th>Seller VAT</th><th>Buyer VAT</th><th>Verdict</th><th>MLS</th><th>MLS delivery</th>
<th>C2/C3 match</th></tr></thead>
<tbody>
${reports.map((r) => row(ledger, r)).join('\n')}
</tbody></table></body></html>
`;
}
