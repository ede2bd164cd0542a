"""The randomized complete block design: each block (a participant or a scenario) used every system, and
the tests of all systems at once run on the (blocks, systems) matrix of the blocks' mean values.

- Friedman (Järvelin & Kekäläinen 2002 tested methods with it on per-topic averages), tie-corrected:
  chi2_F = [12 / (n k (k + 1)) sum_j R_j^2 - 3 n (k + 1)] / [1 - sum_i t_i / (n k (k^2 - 1))],
  R_j the rank sum of system j over the n blocks, t_i the tie term of block i. Computed here so that two
  systems work too; scipy's own needs three.
- Two-way ANOVA without replication (systems x blocks): F = (SS_systems / (k - 1)) / (SS_error / ((k - 1)
  (n - 1))), SS_error what the systems and the blocks leave of the total.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def block_means(values, systems, blocks) -> tuple[list, list, np.ndarray]:
    """(system labels, block labels with every system, (blocks, systems) matrix of means). Blocks missing a
    system are dropped: the Friedman test and the paired tests need complete blocks."""
    values = np.asarray(values, dtype=np.float64)
    systems = np.asarray(systems)
    blocks = np.asarray(blocks)
    system_labels = sorted(set(systems.tolist()), key=str)
    block_labels = sorted(set(blocks.tolist()), key=str)
    s_index = {label: i for i, label in enumerate(system_labels)}
    b_index = {label: i for i, label in enumerate(block_labels)}
    sums = np.zeros((len(block_labels), len(system_labels)))
    counts = np.zeros_like(sums)
    rows = np.fromiter((b_index[b] for b in blocks.tolist()), dtype=np.int64, count=len(blocks))
    cols = np.fromiter((s_index[s] for s in systems.tolist()), dtype=np.int64, count=len(systems))
    np.add.at(sums, (rows, cols), values)
    np.add.at(counts, (rows, cols), 1)
    complete = np.asarray((counts > 0).all(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums[complete] / counts[complete]
    return system_labels, [b for b, keep in zip(block_labels, complete, strict=True) if keep], means


def friedman(matrix) -> tuple[float, float]:
    """Friedman chi-square (tie-corrected) and p over a (blocks, treatments) matrix; as scipy's
    friedmanchisquare for three or more treatments, and defined for two."""
    data = np.asarray(matrix, dtype=np.float64)
    n, k = data.shape
    ranks = stats.rankdata(data, axis=1)
    rank_sums = ranks.sum(axis=0)
    chi2 = 12.0 / (n * k * (k + 1)) * np.sum(rank_sums**2) - 3.0 * n * (k + 1)
    ties = float(row_ties(data).sum())
    correction = 1.0 - ties / (n * k * (k * k - 1))
    if correction <= 0:
        return 0.0, 1.0
    chi2 /= correction
    return float(chi2), float(stats.chi2.sf(chi2, k - 1))


def row_ties(data: np.ndarray) -> np.ndarray:
    """Each row's tie term, the sum over its groups of equal values of (size^3 - size): for each value, the
    size of its group squared minus one, summed (array work: a loop over 2,500 blocks took a second)."""
    same = (data[:, :, None] == data[:, None, :]).sum(axis=2).astype(np.float64)
    return (same**2 - 1.0).sum(axis=1)


def anova_blocks(matrix) -> tuple[float, int, int, float]:
    """Two-way ANOVA without replication (treatments in columns, blocks in rows): F for the treatments,
    its degrees of freedom and p. With two treatments F is the paired t statistic squared."""
    data = np.asarray(matrix, dtype=np.float64)
    n, k = data.shape
    grand = data.mean()
    ss_treat = n * np.sum((data.mean(axis=0) - grand) ** 2)
    ss_block = k * np.sum((data.mean(axis=1) - grand) ** 2)
    ss_error = np.sum((data - grand) ** 2) - ss_treat - ss_block
    df_treat, df_error = k - 1, (k - 1) * (n - 1)
    if df_error <= 0 or ss_error <= 0:
        return float("nan"), df_treat, df_error, float("nan")
    f = (ss_treat / df_treat) / (ss_error / df_error)
    return float(f), df_treat, df_error, float(stats.f.sf(f, df_treat, df_error))
