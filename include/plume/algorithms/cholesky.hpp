#pragma once
/// @file
/// The branch-induced sparse factorisation H = Lᵀ D L (RBDA §6.5, Tables 6.3
/// and 6.4). L is unit lower triangular and keeps H's sparsity: L(k, j) ≠ 0
/// only when dof j is an ancestor of dof k (Model::dof_parent chains), so the
/// factorisation costs O(n d²) for tree depth d and never fills in.
///
/// Usage: crba(model, data, q); ltdl(model, data); ltdl_solve(model, data, x).

#include "plume/data.hpp"

namespace plume {

/// Factorises data.H (from crba) into data.LD. @returns data.LD.
/// @throws Error if a pivot is not positive (H not positive definite).
const RowMatrixX& ltdl(const Model& model, Data& data);

/// x ← H⁻¹ x using data.LD (x has nv entries); ltdl_solve_columns does it for
/// every column of a matrix with nv rows.
void ltdl_solve(const Model& model, const Data& data, Eigen::Ref<VectorX> x);
void ltdl_solve_columns(const Model& model, const Data& data, Eigen::Ref<MatrixX> X);

/// Half solves, for M = Tᵀ H⁻¹ T = (L⁻ᵀT)ᵀ D⁻¹ (L⁻ᵀT) without forming H⁻¹:
/// X ← L⁻ᵀ X
void ltdl_solve_Lt(const Model& model, const Data& data, Eigen::Ref<MatrixX> X);
/// X ← L⁻¹ X
void ltdl_solve_L(const Model& model, const Data& data, Eigen::Ref<MatrixX> X);
/// The same as ltdl_solve_Lt for many right-hand sides stored as the ROWS of
/// Xt (m × nv): Xt ← (L⁻ᵀ Xtᵀ)ᵀ, vectorised across the m right-hand sides.
void ltdl_solve_Lt_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt);
/// X ← L⁻¹ X for right-hand sides stored as the ROWS of Xt (m × nv).
void ltdl_solve_L_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt);
/// Xt ← (H⁻¹ Xtᵀ)ᵀ: ltdl_solve for the m right-hand sides stored as the rows
/// of Xt (m × nv), vectorised across them. For ∂q̈/∂x = −H⁻¹ ∂τ/∂x, pass
/// (∂τ/∂x)ᵀ.
void ltdl_solve_rows(const Model& model, const Data& data, Eigen::Ref<MatrixX> Xt);
/// Hinv ← H⁻¹ (nv × nv, exactly symmetric) from data.LD: the unit columns'
/// half solves L⁻ᵀ eᵢ are nonzero only on dof i's ancestors, and only one
/// triangle of the second half is formed: about half the work of solving
/// the identity.
void ltdl_inverse(const Model& model, const Data& data, Eigen::Ref<MatrixX> Hinv);

namespace unchecked {
const RowMatrixX& ltdl(const Model& model, Data& data);
}  // namespace unchecked

}  // namespace plume
