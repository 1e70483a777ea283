(** * The ALiBi tail bound, once and for all (positional/alibi-tail-bound).

    Setting (docs/papers/positional.md): a query at position i attends the
    keys at distances r = 0, …, i with logits s_r = a_r − m r, slope m > 0.
    "Content within Δ" (Δ ≥ 0) means that every content logit lies in one
    interval of width Δ: c ≤ a_r ≤ c + Δ for r = 0, …, i, for some real c
    (a_min = c, a_max = c + Δ).  The attention weights are
    p_r = e^{s_r} / Σ_{s=0}^{i} e^{s_s}, and the tail beyond w is
    T_w = Σ_{r=w}^{i} p_r (0 when i < w).

    Theorem [alibi_tail_bound]: for all real m > 0, Δ ≥ 0, c, all integers
    w ≥ 1 and i, and all content a within Δ,

      T_w ≤ T^∞(w) = e^Δ e^{−mw} / (1 − e^{−mw} + e^Δ e^{−mw}),

    and [alibi_tail_bound_simple]: T^∞(w) ≤ e^Δ e^{−mw}.  Uniform in the
    query position i, so in the context length.

    Proof: with x = e^{−m}, the tail mass A = Σ_{r=w}^{i} e^{a_r} x^r is at
    most e^{c+Δ} Σ_{r=w}^{i} x^r ≤ e^{c+Δ} x^w / (1 − x), and the head mass
    B = Σ_{r=0}^{w−1} e^{a_r} x^r is at least e^c (1 − x^w) / (1 − x)
    (geometric sums: [sumZ_exp_lin] of Attncheck.v); T_w = A / (B + A) grows
    with A and falls with B.

    Checked by [make coq] and the test [coq::the_alibi_tail_bound_lemma_is_proven_in_coq];
    [Print Assumptions] at the end must list only the axioms of Coq's standard
    reals. *)

From Coq Require Import ZArith Reals Lra Lia List.
From Attncheck Require Import Attncheck.
Local Open Scope R_scope.

Lemma sumZ_le : forall lo hi f g, (forall k, (lo <= k <= hi)%Z -> f k <= g k) ->
  sumZ lo hi f <= sumZ lo hi g.
Proof.
  intros lo hi f g H. unfold sumZ.
  assert (Hl : forall k, In k (rangeZ lo hi) -> f k <= g k)
    by (intros k Hk; apply H, in_rangeZ, Hk).
  induction (rangeZ lo hi) as [|k l IH]; cbn [fold_right].
  - lra.
  - apply Rplus_le_compat; [apply Hl; left; reflexivity | apply IH; intros j Hj; apply Hl; right; exact Hj].
Qed.

Lemma sumZ_scal : forall lo hi c f, sumZ lo hi (fun k => c * f k) = c * sumZ lo hi f.
Proof.
  intros lo hi c f. unfold sumZ.
  induction (rangeZ lo hi) as [|k l IH]; cbn [fold_right].
  - ring.
  - rewrite IH. ring.
Qed.

Lemma sumZ_div : forall lo hi c f, sumZ lo hi (fun k => f k / c) = sumZ lo hi f / c.
Proof.
  intros lo hi c f. unfold sumZ.
  induction (rangeZ lo hi) as [|k l IH]; cbn [fold_right].
  - unfold Rdiv. ring.
  - rewrite IH. unfold Rdiv. ring.
Qed.

Lemma sumZ_ext : forall lo hi f g, (forall k, (lo <= k <= hi)%Z -> f k = g k) ->
  sumZ lo hi f = sumZ lo hi g.
Proof.
  intros lo hi f g H. apply Rle_antisym; apply sumZ_le; intros k Hk; rewrite (H k Hk); lra.
Qed.

Lemma sumZ_nonneg : forall lo hi f, (forall k, (lo <= k <= hi)%Z -> 0 <= f k) -> 0 <= sumZ lo hi f.
Proof.
  intros lo hi f H. replace 0 with (sumZ lo hi (fun _ => 0)).
  - apply sumZ_le, H.
  - unfold sumZ. induction (rangeZ lo hi) as [|k l IH]; cbn [fold_right]; [reflexivity | rewrite IH; ring].
Qed.

Lemma sumZ_nil : forall lo hi f, (hi < lo)%Z -> sumZ lo hi f = 0.
Proof.
  intros lo hi f H. unfold sumZ, rangeZ. replace (Z.to_nat (hi - lo + 1)) with 0%nat by lia. reflexivity.
Qed.

Theorem alibi_tail_bound : forall (m D c : R) (w i : Z) (a : Z -> R),
  0 < m -> 0 <= D -> (1 <= w)%Z ->
  (forall r, (0 <= r <= i)%Z -> c <= a r <= c + D) ->
  sumZ w i (fun r => exp (a r - m * IZR r) / sumZ 0 i (fun s => exp (a s - m * IZR s)))
  <= exp D * exp (- m * IZR w) / (1 - exp (- m * IZR w) + exp D * exp (- m * IZR w)).
Proof.
  intros m D c w i a Hm HD Hw Ha.
  set (X := exp (- m * IZR w)). set (E := exp D).
  assert (HX0 : 0 < X) by apply exp_pos.
  assert (HX1 : X < 1).
  { unfold X. rewrite <- exp_0. apply exp_increasing.
    assert (1 <= IZR w) by (apply IZR_le; lia). nra. }
  assert (HE : 1 <= E) by (unfold E; rewrite <- exp_0; destruct HD as [HD|HD];
                          [left; apply exp_increasing, HD | right; rewrite HD; reflexivity]).
  assert (Hbound : 0 < E * X / (1 - X + E * X)).
  { apply Rdiv_lt_0_compat; nra. }
  destruct (Z_lt_le_dec i w) as [Hiw|Hwi].
  { rewrite sumZ_nil by exact Hiw. lra. }
  set (e := fun s => exp (a s - m * IZR s)).
  set (A := sumZ w i e). set (B := sumZ 0 (w - 1) e).
  assert (HD0 : sumZ 0 i e = B + A) by (apply sumZ_split; lia).
  (* the tail is A / (B + A) *)
  replace (sumZ w i (fun r => exp (a r - m * IZR r) / sumZ 0 i e)) with (A / (B + A)).
  2:{ rewrite <- HD0. unfold A. symmetry. apply (sumZ_div w i (sumZ 0 i e) e). }
  (* x = e^{−m}, the geometric sums, and the bounds on A and B *)
  assert (Hm0 : - m <> 0) by lra.
  set (x := exp (- m)).
  assert (Hx1 : 0 < 1 - x).
  { apply Rlt_Rminus. unfold x. rewrite <- exp_0. apply exp_increasing. lra. }
  assert (Hsplit : forall s, e s = exp (a s) * exp (- m * IZR s)).
  { intros s. unfold e. rewrite <- exp_plus. f_equal. ring. }
  assert (HG0 : sumZ 0 (w - 1) (fun s => exp (- m * IZR s)) = (1 - X) / (1 - x)).
  { rewrite (sumZ_exp_lin 0 (w - 1) w (- m)); try lia; auto.
    unfold X, x. rewrite Rmult_0_r, exp_0. reflexivity. }
  assert (HGw : sumZ w i (fun s => exp (- m * IZR s)) = (X - exp (- m * IZR (i + 1))) / (1 - x)).
  { rewrite (sumZ_exp_lin w i (i + 1) (- m)); try lia; auto. }
  set (U := exp c * E * X / (1 - x)).
  set (L := exp c * (1 - X) / (1 - x)).
  assert (HA : A <= U).
  { apply Rle_trans with (exp (c + D) * sumZ w i (fun s => exp (- m * IZR s))).
    - rewrite <- sumZ_scal. apply sumZ_le. intros k Hk. rewrite Hsplit.
      apply Rmult_le_compat_r; [left; apply exp_pos|].
      destruct (Ha k ltac:(lia)) as [_ H2]. destruct H2 as [H2|H2];
        [left; apply exp_increasing, H2 | right; rewrite H2; reflexivity].
    - rewrite HGw. unfold U. rewrite exp_plus. fold E. unfold Rdiv.
      assert (0 <= exp c * E * exp (- m * IZR (i + 1)) * / (1 - x)).
      { repeat apply Rmult_le_pos; try lra; left;
          [apply exp_pos | apply exp_pos | apply Rinv_0_lt_compat, Hx1]. }
      lra. }
  assert (HB : L <= B).
  { unfold L, B. replace (exp c * (1 - X) / (1 - x)) with (exp c * ((1 - X) / (1 - x)))
      by (unfold Rdiv; ring). rewrite <- HG0, <- sumZ_scal. apply sumZ_le. intros k Hk. rewrite Hsplit.
    apply Rmult_le_compat_r; [left; apply exp_pos|].
    destruct (Ha k ltac:(lia)) as [H1 _]. destruct H1 as [H1|H1];
      [left; apply exp_increasing, H1 | right; rewrite H1; reflexivity]. }
  assert (HA0 : 0 <= A) by (apply sumZ_nonneg; intros k _; left; apply exp_pos).
  assert (Hc : 0 < exp c) by apply exp_pos.
  assert (HL : 0 < L) by (unfold L; apply Rdiv_lt_0_compat; [apply Rmult_lt_0_compat|]; lra).
  assert (HU : 0 < U) by (unfold U; apply Rdiv_lt_0_compat; [repeat apply Rmult_lt_0_compat|]; lra).
  (* A / (B + A) ≤ U / (L + U) = E X / (1 − X + E X) *)
  replace (E * X / (1 - X + E * X)) with (U / (L + U)).
  2:{ assert (0 < exp c * E * X) by (repeat apply Rmult_lt_0_compat; lra).
      assert (0 < exp c * (1 - X)) by (apply Rmult_lt_0_compat; lra).
      assert (0 < E * X) by (apply Rmult_lt_0_compat; lra).
      unfold U, L. field. repeat split; apply Rgt_not_eq; lra. }
  assert (HBA : 0 < B + A) by lra.
  apply Rmult_le_reg_r with ((B + A) * (L + U)); [nra|].
  replace (A / (B + A) * ((B + A) * (L + U))) with (A * (L + U)) by (field; lra).
  replace (U / (L + U) * ((B + A) * (L + U))) with (U * (B + A)) by (field; lra).
  assert (A * L <= U * L) by (apply Rmult_le_compat_r; lra).
  assert (U * L <= U * B) by (apply Rmult_le_compat_l; lra).
  lra.
Qed.

Corollary alibi_tail_bound_simple : forall (m D : R) (w : Z),
  0 < m -> 0 <= D -> (1 <= w)%Z ->
  exp D * exp (- m * IZR w) / (1 - exp (- m * IZR w) + exp D * exp (- m * IZR w))
  <= exp D * exp (- m * IZR w).
Proof.
  intros m D w Hm HD Hw.
  set (X := exp (- m * IZR w)). set (E := exp D).
  assert (HX0 : 0 < X) by apply exp_pos.
  assert (HX1 : X < 1).
  { unfold X. rewrite <- exp_0. apply exp_increasing.
    assert (1 <= IZR w) by (apply IZR_le; lia). nra. }
  assert (HE : 1 <= E) by (unfold E; rewrite <- exp_0; destruct HD as [HD|HD];
                          [left; apply exp_increasing, HD | right; rewrite HD; reflexivity]).
  assert (HEX : 0 < E * X) by (apply Rmult_lt_0_compat; lra).
  assert (Hd : 1 <= 1 - X + E * X) by nra.
  apply Rmult_le_reg_r with (1 - X + E * X); [lra|].
  replace (E * X / (1 - X + E * X) * (1 - X + E * X)) with (E * X) by (field; lra).
  nra.
Qed.

Definition alibi_tail_bounds := conj alibi_tail_bound alibi_tail_bound_simple.
Print Assumptions alibi_tail_bounds.
