(** * Attncheck: the plain meaning of attncheck certificates, in Coq.

    This file is shipped with attncheck and imported by every generated
    certificate file ([attncheck export coq]).  It defines, from scratch and
    with nothing but the standard library:

    - integer ranges, range sums and range quantifiers ([rangeZ], [sumZ]);
    - geometric sums Σ q^k and Σ k q^k (q = e^c) in closed form, proven by
      induction ([sumZ_exp_lin], [sumZ_lin_exp_lin]);
    - [Rceil] and [Rfloor] on the reals;
    - the data operations of certificates over a ±1 sign matrix [S] and a
      row-sparse rational matrix [B] (Gram maxima, the ratio-lemma quantities,
      row sums), as the plain definitions of the format: sums of products over
      lists and maxima over index ranges.  Coq computes them itself
      ([vm_compute]) from the data embedded in the certificate file;
    - the band reachability of windowed causal attention ([band_op]: the
      receptive field e_{L−1} Aˡ of the last query, and its size), defined as
      boolean matrix products ([band_step_spec]) and computed by a one-pass
      scan proven equal to them ([band_step_eq]);
    - the discrete map (D) of the [layer] datum over the reals ([layer_stepR],
      plain softmax attention and the residual step) and the maxima over tokens
      of its iterates ([layer_max_sqnorm], [layer_max_sqdist]), their partition
      sums ([layer_partition]), the dual functionals of its real eigenvalues
      ([adj_row], [layer_dual_at]), with boxes of
      reals ([in_box]); no obligation is proven from them yet (docs/coq.md);
    - the papers' building blocks of the format ([alibi_slope], [alibi_tail],
      [alibi_window], [union_bound_dim]) with lemmas relating each to its
      expansion, and the minimality of the ALiBi window
      ([alibi_window_minimal]: T^∞ at w_ε is at most ε, above ε at w_ε − 1);
    - a small reflective decision procedure for exact (rational) formulas:
      [decide] evaluates a formula in exact rationals, and [decide_sound]
      proves that [decide f = true] implies the real-number statement
      [fdenote f].  Generated files state each obligation in plain real-number
      syntax; Coq checks by conversion that it is the statement [decide] spoke
      about.

    No axiom is added: everything here rests on Coq's standard reals. *)

From Coq Require Import ZArith QArith Qround Qabs Qreals Reals Lra Lia List.
Import ListNotations.

Local Open Scope Z_scope.

(** ** Integer ranges *)

(** [seqZ lo n] = [lo; lo + 1; …; lo + n − 1]. *)
Fixpoint seqZ (lo : Z) (n : nat) : list Z :=
  match n with O => [] | S n' => lo :: seqZ (Z.succ lo) n' end.

(** The integers lo..hi, in order; empty when hi < lo. *)
Definition rangeZ (lo hi : Z) : list Z := seqZ lo (Z.to_nat (hi - lo + 1)).

Lemma in_seqZ : forall n lo k, In k (seqZ lo n) <-> lo <= k < lo + Z.of_nat n.
Proof.
  induction n as [|n IH]; intros lo k; simpl.
  - lia.
  - rewrite IH. lia.
Qed.

Lemma in_rangeZ : forall lo hi k, In k (rangeZ lo hi) <-> lo <= k <= hi.
Proof.
  intros lo hi k. unfold rangeZ. rewrite in_seqZ.
  lia.
Qed.

(** A range quantifier is proven by proving each listed instance. *)
Lemma Forall_rangeZ : forall lo hi (P : Z -> Prop),
  Forall P (rangeZ lo hi) -> forall k, lo <= k <= hi -> P k.
Proof.
  intros lo hi P H k Hk. rewrite Forall_forall in H. apply H, in_rangeZ, Hk.
Qed.

Local Open Scope R_scope.

(** Σ_{k = lo}^{hi} f k (0 when hi < lo). *)
Definition sumZ (lo hi : Z) (f : Z -> R) : R :=
  fold_right (fun k acc => f k + acc) 0 (rangeZ lo hi).
Arguments sumZ (lo hi)%Z f.

(** ** Geometric sums in closed form

    Σ_{k=lo}^{hi} q^k and Σ_{k=lo}^{hi} k q^k for q = e^c ≠ 1, proven by
    induction on hi.  Generated files use them to replace such a sum, as
    stated, by its closed form (the lemma is applied to the very sum of the
    statement), so that [interval] sees a few terms instead of one per k. *)

Lemma seqZ_snoc : forall n lo, seqZ lo (S n) = seqZ lo n ++ [(lo + Z.of_nat n)%Z].
Proof.
  induction n as [|n IH]; intros lo.
  - simpl. rewrite Z.add_0_r. reflexivity.
  - change (seqZ lo (S (S n))) with (lo :: seqZ (Z.succ lo) (S n)).
    rewrite IH. change (seqZ lo (S n)) with (lo :: seqZ (Z.succ lo) n).
    rewrite <- app_comm_cons. do 3 f_equal. lia.
Qed.

(** Σ_{k=lo}^{hi+1} f k = Σ_{k=lo}^{hi} f k + f (hi + 1), when lo ≤ hi + 1. *)
Lemma sumZ_last : forall lo hi f, (lo <= hi + 1)%Z ->
  sumZ lo (hi + 1) f = sumZ lo hi f + f (hi + 1)%Z.
Proof.
  intros lo hi f H. unfold sumZ, rangeZ.
  replace (Z.to_nat (hi + 1 - lo + 1)) with (S (Z.to_nat (hi - lo + 1))) by lia.
  rewrite seqZ_snoc, fold_right_app. cbn [fold_right].
  replace (lo + Z.of_nat (Z.to_nat (hi - lo + 1)))%Z with (hi + 1)%Z by lia.
  generalize (f (hi + 1)%Z). intros y.
  induction (seqZ lo (Z.to_nat (hi - lo + 1))) as [|k l IHl]; cbn [fold_right].
  - ring.
  - rewrite IHl. ring.
Qed.

Lemma sumZ_empty : forall lo f, sumZ lo (lo - 1) f = 0.
Proof.
  intros lo f. unfold sumZ, rangeZ. replace (lo - 1 - lo + 1)%Z with 0%Z by lia. reflexivity.
Qed.

(** Induction on the upper end of a range lo..hi, from the empty range up. *)
Lemma sumZ_ind : forall lo (P : Z -> Prop), P (lo - 1)%Z ->
  (forall hi, (lo <= hi + 1)%Z -> P hi -> P (hi + 1)%Z) ->
  forall hi, (lo <= hi + 1)%Z -> P hi.
Proof.
  intros lo P H0 HS hi Hhi.
  replace hi with (lo - 1 + Z.of_nat (Z.to_nat (hi - lo + 1)))%Z by lia.
  induction (Z.to_nat (hi - lo + 1)) as [|n IH].
  - replace (lo - 1 + Z.of_nat 0)%Z with (lo - 1)%Z by lia. exact H0.
  - replace (lo - 1 + Z.of_nat (S n))%Z with (lo - 1 + Z.of_nat n + 1)%Z by lia.
    apply HS; [lia | exact IH].
Qed.

(** Σ_{lo}^{hi} = Σ_{lo}^{w−1} + Σ_{w}^{hi} for lo ≤ w ≤ hi + 1. *)
Lemma sumZ_split : forall lo w hi f, (lo <= w)%Z -> (w <= hi + 1)%Z ->
  sumZ lo hi f = sumZ lo (w - 1) f + sumZ w hi f.
Proof.
  intros lo w hi f Hlo. revert hi. apply (sumZ_ind w).
  - rewrite sumZ_empty. ring.
  - intros hi Hhi IH. rewrite !sumZ_last by lia. rewrite IH. ring.
Qed.

(** The same split at lo..m and m1..hi, m1 = m + 1 (so that a generated file
    writes both ends as numerals). *)
Lemma sumZ_split2 : forall lo m m1 hi f, m1 = (m + 1)%Z -> (lo <= m1)%Z -> (m <= hi)%Z ->
  sumZ lo hi f = sumZ lo m f + sumZ m1 hi f.
Proof.
  intros lo m m1 hi f -> H1 H2. rewrite (sumZ_split lo (m + 1) hi f) by lia.
  f_equal; f_equal; lia.
Qed.

Lemma exp_lin_succ : forall c k, exp (c * IZR (k + 1)) = exp (c * IZR k) * exp c.
Proof. intros c k. rewrite plus_IZR, <- exp_plus. f_equal. ring. Qed.

Lemma one_minus_exp_neq : forall c, c <> 0 -> 1 - exp c <> 0.
Proof. intros c Hc H. apply Hc, exp_inv. rewrite exp_0. lra. Qed.

(** Σ_{k=lo}^{hi} q^k = (q^lo − q^(hi+1)) / (1 − q), q = e^c, c ≠ 0, lo ≤ hi + 1. *)
Lemma sumZ_exp_lin : forall lo hi hi1 c (f : Z -> R),
  hi1 = (hi + 1)%Z -> (lo <= hi1)%Z -> c <> 0 -> (forall k, f k = exp (c * IZR k)) ->
  sumZ lo hi f = (exp (c * IZR lo) - exp (c * IZR hi1)) / (1 - exp c).
Proof.
  intros lo hi hi1 c f -> Hlo Hc Hf.
  pose proof (one_minus_exp_neq c Hc) as Hq.
  revert hi Hlo. apply sumZ_ind.
  - rewrite sumZ_empty. replace (lo - 1 + 1)%Z with lo by lia. field. exact Hq.
  - intros hi Hhi IH. rewrite sumZ_last by exact Hhi. rewrite IH, Hf.
    rewrite (exp_lin_succ c (hi + 1)). field. exact Hq.
Qed.

(** Σ_{k=lo}^{hi} k q^k = (lo q^lo − (hi+1) q^(hi+1)) / (1 − q) + q (q^lo − q^(hi+1)) / (1 − q)²,
    q = e^c, c ≠ 0, lo ≤ hi + 1. *)
Lemma sumZ_lin_exp_lin : forall lo hi hi1 c (f : Z -> R),
  hi1 = (hi + 1)%Z -> (lo <= hi1)%Z -> c <> 0 -> (forall k, f k = IZR k * exp (c * IZR k)) ->
  sumZ lo hi f =
    (IZR lo * exp (c * IZR lo) - IZR hi1 * exp (c * IZR hi1)) / (1 - exp c)
    + exp c * (exp (c * IZR lo) - exp (c * IZR hi1)) / ((1 - exp c) * (1 - exp c)).
Proof.
  intros lo hi hi1 c f -> Hlo Hc Hf.
  pose proof (one_minus_exp_neq c Hc) as Hq.
  revert hi Hlo. apply sumZ_ind.
  - rewrite sumZ_empty. replace (lo - 1 + 1)%Z with lo by lia. field. exact Hq.
  - intros hi Hhi IH. rewrite sumZ_last by exact Hhi. rewrite IH, Hf.
    rewrite (exp_lin_succ c (hi + 1)), (plus_IZR (hi + 1) 1). field. exact Hq.
Qed.

(** ** Sums of logarithms by blocks

    Σ_{i=lo}^{hi} ln i = Σ_b ln (Π_{i ∈ block b} i) for 1 ≤ lo, blocks of k
    consecutive integers (the last one shorter).  A generated file rewrites a
    long sum of logarithms (ln n! for n = 65536) with [sumZ_ln_blocks]; Coq
    computes the block products itself ([unroll_sums] evaluates [ln_blocks]
    with [vm_compute]), so that [interval] sees one logarithm per block. *)

Definition prodZ (lo hi : Z) : Z := fold_right Z.mul 1%Z (rangeZ lo hi).

Lemma prodZ_empty : forall lo, prodZ lo (lo - 1) = 1%Z.
Proof.
  intros lo. unfold prodZ, rangeZ. replace (lo - 1 - lo + 1)%Z with 0%Z by lia. reflexivity.
Qed.

Lemma prodZ_last : forall lo hi, (lo <= hi + 1)%Z -> prodZ lo (hi + 1) = (prodZ lo hi * (hi + 1))%Z.
Proof.
  intros lo hi H. unfold prodZ, rangeZ.
  replace (Z.to_nat (hi + 1 - lo + 1)) with (S (Z.to_nat (hi - lo + 1))) by lia.
  rewrite seqZ_snoc, fold_right_app. cbn [fold_right].
  replace (lo + Z.of_nat (Z.to_nat (hi - lo + 1)))%Z with (hi + 1)%Z by lia.
  generalize (hi + 1)%Z. intros y.
  induction (seqZ lo (Z.to_nat (hi - lo + 1))) as [|k l IHl]; cbn [fold_right].
  - ring.
  - rewrite IHl. ring.
Qed.

Lemma sumZ_ln_prodZ : forall lo hi, (1 <= lo)%Z -> (lo <= hi + 1)%Z ->
  sumZ lo hi (fun i => ln (IZR i)) = ln (IZR (prodZ lo hi)) /\ (0 < prodZ lo hi)%Z.
Proof.
  intros lo hi H1. revert hi. apply sumZ_ind.
  - rewrite sumZ_empty, prodZ_empty. split; [rewrite ln_1; reflexivity | lia].
  - intros hi Hhi [IH Hp]. rewrite sumZ_last, prodZ_last by exact Hhi. split; [| nia].
    rewrite IH, mult_IZR, ln_mult; [reflexivity | apply IZR_lt; exact Hp | apply IZR_lt; lia].
Qed.

Fixpoint ln_blocks_aux (lo hi k : Z) (fuel : nat) : list Z :=
  match fuel with
  | O => [prodZ lo hi]
  | S f => if (lo + k <=? hi)%Z then prodZ lo (lo + k - 1) :: ln_blocks_aux (lo + k) hi k f
           else [prodZ lo hi]
  end.

Definition ln_blocks (lo hi k : Z) : list Z := ln_blocks_aux lo hi k (Z.to_nat ((hi - lo) / k + 1)).

Lemma sumZ_ln_blocks_aux : forall k fuel lo hi, (1 <= k)%Z -> (1 <= lo)%Z -> (lo <= hi + 1)%Z ->
  sumZ lo hi (fun i => ln (IZR i)) =
  fold_right Rplus 0 (map (fun p => ln (IZR p)) (ln_blocks_aux lo hi k fuel)).
Proof.
  intros k fuel. induction fuel as [|f IH]; intros lo hi Hk Hlo Hhi; cbn [ln_blocks_aux].
  - cbn [map fold_right]. rewrite Rplus_0_r. apply sumZ_ln_prodZ; lia.
  - destruct (lo + k <=? hi)%Z eqn:E.
    + apply Z.leb_le in E. cbn [map fold_right].
      rewrite (sumZ_split lo (lo + k)%Z hi) by lia.
      rewrite (proj1 (sumZ_ln_prodZ lo (lo + k - 1)%Z ltac:(lia) ltac:(lia))).
      rewrite (IH (lo + k)%Z hi) by lia. reflexivity.
    + cbn [map fold_right]. rewrite Rplus_0_r. apply sumZ_ln_prodZ; lia.
Qed.

Lemma sumZ_ln_blocks : forall lo hi k, (1 <= k)%Z -> (1 <= lo)%Z -> (lo <= hi + 1)%Z ->
  sumZ lo hi (fun i => ln (IZR i)) = fold_right Rplus 0 (map (fun p => ln (IZR p)) (ln_blocks lo hi k)).
Proof. intros lo hi k Hk Hlo Hhi. apply sumZ_ln_blocks_aux; assumption. Qed.

(** ** Ceiling and floor *)

(** [up x] is the integer with x < up x ≤ x + 1 (standard library). *)
Definition Rfloor (x : R) : R := IZR (up x - 1).
Definition Rceil (x : R) : R := IZR (1 - up (- x)).

Lemma Rfloor_eq : forall x z, IZR z <= x < IZR z + 1 -> IZR z = Rfloor x.
Proof.
  intros x z [H1 H2]. unfold Rfloor.
  rewrite <- (tech_up x (z + 1)).
  - f_equal. lia.
  - rewrite plus_IZR. lra.
  - rewrite plus_IZR. lra.
Qed.

Lemma Rceil_eq : forall x z, IZR z - 1 < x <= IZR z -> IZR z = Rceil x.
Proof.
  intros x z [H1 H2]. unfold Rceil.
  rewrite <- (tech_up (- x) (1 - z)).
  - f_equal. lia.
  - rewrite minus_IZR. lra.
  - rewrite minus_IZR. lra.
Qed.

(** min and max as CoqInterval's [interval] can evaluate them: by the absolute value
    (the translation rewrites [Rmin a b] and [Rmax a b] of non-rational terms so). *)
Lemma Rmin_abs : forall a b, Rmin a b = (a + b - Rabs (a - b)) / 2.
Proof.
  intros a b. unfold Rmin. destruct (Rle_dec a b) as [H|H].
  - rewrite Rabs_left1 by lra. lra.
  - apply Rnot_le_lt in H. rewrite Rabs_right by lra. lra.
Qed.

Lemma Rmax_abs : forall a b, Rmax a b = (a + b + Rabs (a - b)) / 2.
Proof.
  intros a b. unfold Rmax. destruct (Rle_dec a b) as [H|H].
  - rewrite Rabs_left1 by lra. lra.
  - apply Rnot_le_lt in H. rewrite Rabs_right by lra. lra.
Qed.

(** ** Data: a ±1 sign matrix and a row-sparse rational matrix *)

(** S ∈ {±1}^{n×d}: [s_d] = d and the n rows as lists of ±1. *)
Record signs := Signs { s_d : Z; s_rows : list (list Z) }.
(** B: [b_n] = n and, per row, its stored (column, value) pairs; the stored
    columns are the row's support supp_i. *)
Record sparse := Sparse { b_n : Z; b_rows : list (list (Z * Q)) }.

Local Open Scope Z_scope.

(** The first [n] bits of [x], least significant first, as signs: bit 1 is −1
    and bit 0 is +1 (the certificate format's convention). *)
Fixpoint sign_bits (n : nat) (x : Z) : list Z :=
  match n with
  | O => []
  | S n' => (if Z.odd x then -1 else 1) :: sign_bits n' (Z.div2 x)
  end.

(** A sign matrix from its rows written as integers: column c of a row is −1
    exactly when bit c of its integer is set. *)
Definition signs_of_bits (d : Z) (rows : list Z) : signs :=
  Signs d (map (sign_bits (Z.to_nat d)) rows).

Definition rows_signs (S : signs) : Z := Z.of_nat (length (s_rows S)).
Definition rows_sparse (B : sparse) : Z := b_n B.
Definition cols (S : signs) : Z := s_d S.

(** ⟨u, v⟩ = Σ_c u_c v_c (accumulated left to right). *)
Fixpoint dot_acc (u v : list Z) (acc : Z) : Z :=
  match u, v with a :: u', b :: v' => dot_acc u' v' (acc + a * b) | _, _ => acc end.
Definition dot (u v : list Z) : Z := dot_acc u v 0.

(** G = S Sᵀ: G_lj = ⟨s_l, s_j⟩, as the list of its rows. *)
Definition gram_matrix (S : signs) : list (list Z) :=
  map (fun u => map (dot u) (s_rows S)) (s_rows S).

(** The entries of a list with their indices 0, 1, … *)
Definition indexed {A} (l : list A) : list (Z * A) := combine (seqZ 0 (length l)) l.

(** Maximum of a list of nonnegative integers (0 for the empty list). *)
Definition maxZ (l : list Z) : Z := fold_right Z.max 0 l.

(** max_{l ≠ j} |G_lj| (0 when n < 2). *)
Definition gram_max_abs_of (G : list (list Z)) : Z :=
  maxZ (flat_map (fun lr => map (fun jg => if fst lr =? fst jg then 0 else Z.abs (snd jg))
                                (indexed (snd lr)))
                 (indexed G)).
Definition gram_max_abs (S : signs) : Z := gram_max_abs_of (gram_matrix S).

Local Open Scope Q_scope.

(** Maximum of a list of rationals ([None] for the empty list). *)
Definition maxQ (l : list Q) : option Q :=
  fold_right (fun x acc => match acc with
    | None => Some x
    | Some y => Some (if Qle_bool x y then y else x) end) None l.
Definition odflt (o : option Q) : Q := match o with Some x => x | None => 0 end.

Fixpoint zipw {A B C} (f : A -> B -> C) (u : list A) (v : list B) : list C :=
  match u, v with a :: u', b :: v' => f a b :: zipw f u' v' | _, _ => [] end.

Definition row_sum (r : list (Z * Q)) : Q := fold_right (fun p acc => snd p + acc) 0 r.
Definition in_supp (r : list (Z * Q)) (j : Z) : bool := existsb (fun p => (fst p =? j)%Z) r.

(** Row i of Λ = B G / d and of E, for the entries r = [(l, B_il); …] of row i:
    Λ_ij = Σ_{l ∈ supp_i} B_il G_lj / d and E_ij = Σ_{l ∈ supp_i, l ≠ j} B_il G_lj / d,
    listed as (j, Λ_ij, E_ij) for j = 0 … n − 1. *)
Definition lam_row (d : Z) (G : list (list Z)) (r : list (Z * Q)) : list (Z * Q * Q) :=
  let zero := map (fun _ => 0) G in
  let grow l := indexed (nth (Z.to_nat l) G []) in
  let lam := fold_right (fun p acc =>
      zipw Qplus (map (fun jg => snd p * inject_Z (snd jg)) (grow (fst p))) acc) zero r in
  let err := fold_right (fun p acc =>
      zipw Qplus (map (fun jg => if (fst jg =? fst p)%Z then 0 else snd p * inject_Z (snd jg))
                      (grow (fst p))) acc) zero r in
  zipw (fun j le => (j, fst le / inject_Z d, snd le / inject_Z d))
       (seqZ 0 (length G)) (combine lam err).

(** Per row i: (max_j |E_ij|,
                max_{j, j' ∈ supp_i} |E_ij − E_ij'| (0 for an empty row),
                max_{j ∉ supp_i, j' ∈ supp_i} Λ_ij − Λ_ij' (None if there is no such pair),
                Σ_l B_il). *)
Definition lemma_row (d : Z) (G : list (list Z)) (r : list (Z * Q)) : Q * Q * option Q * Q :=
  let lr := lam_row d G r in
  let on := filter (fun t => in_supp r (fst (fst t))) lr in
  let off := filter (fun t => negb (in_supp r (fst (fst t)))) lr in
  (odflt (maxQ (map (fun t => Qabs (snd t)) lr)),
   odflt (maxQ (flat_map (fun t => map (fun t' => Qabs (snd t - snd t')) on) on)),
   maxQ (flat_map (fun t => map (fun t' => snd (fst t) - snd (fst t')) on) off),
   row_sum r).

Definition lemma_rows_of (d : Z) (G : list (list Z)) (B : sparse) :=
  map (lemma_row d G) (b_rows B).

(** The five maxima, each read off the rows of [lemma_rows_of] ([*_rows]), so that a
    generated data file computes the rows once for all five (the [*_of] forms are the
    same terms once [*_rows] is unfolded). *)
Definition err_max_rows (rows : list (Q * Q * option Q * Q)) : Q :=
  odflt (maxQ (map (fun x => fst (fst (fst x))) rows)).
Definition lemma_a_rows (rows : list (Q * Q * option Q * Q)) : Q :=
  odflt (maxQ (map (fun x => snd (fst (fst x))) rows)).
Definition lemma_b_rows (rows : list (Q * Q * option Q * Q)) : Q :=
  odflt (maxQ (flat_map (fun x => match snd (fst x) with Some v => [v] | None => [] end) rows)).
Definition lemma_a_row_rows (rows : list (Q * Q * option Q * Q)) (t : Q) : Q :=
  odflt (maxQ (map (fun x => snd (fst (fst x)) - 2 * t * snd x) rows)).
Definition lemma_b_row_rows (rows : list (Q * Q * option Q * Q)) (t : Q) : Q :=
  odflt (maxQ (flat_map (fun x => match snd (fst x) with
                                  | Some v => [v - 2 * t * snd x] | None => [] end) rows)).

Definition err_max_of d G B : Q := err_max_rows (lemma_rows_of d G B).
Definition lemma_a_of d G B : Q := lemma_a_rows (lemma_rows_of d G B).
Definition lemma_b_of d G B : Q := lemma_b_rows (lemma_rows_of d G B).
Definition lemma_a_row_of d G B (t : Q) : Q := lemma_a_row_rows (lemma_rows_of d G B) t.
Definition lemma_b_row_of d G B (t : Q) : Q := lemma_b_row_rows (lemma_rows_of d G B) t.

(** max_{i, j} |E_ij|. *)
Definition err_max (S : signs) (B : sparse) : Q := err_max_of (s_d S) (gram_matrix S) B.
(** (a): max_i max_{j, j' ∈ supp_i} |E_ij − E_ij'|. *)
Definition lemma_a (S : signs) (B : sparse) : Q := lemma_a_of (s_d S) (gram_matrix S) B.
(** (b): max over i, j ∉ supp_i, j' ∈ supp_i of Λ_ij − Λ_ij'. *)
Definition lemma_b (S : signs) (B : sparse) : Q := lemma_b_of (s_d S) (gram_matrix S) B.
(** (a) per row: max_i (max_{j, j' ∈ supp_i} |E_ij − E_ij'| − 2t Σ_l B_il). *)
Definition lemma_a_row (S : signs) (B : sparse) (t : Q) : Q :=
  lemma_a_row_of (s_d S) (gram_matrix S) B t.
(** (b) per row: max over rows i with such a pair of
    (max_{j ∉ supp_i, j' ∈ supp_i} Λ_ij − Λ_ij') − 2t Σ_l B_il. *)
Definition lemma_b_row (S : signs) (B : sparse) (t : Q) : Q :=
  lemma_b_row_of (s_d S) (gram_matrix S) B t.

(** max_i Σ_l B_il, max_i |supp_i|, and the minimum, maximum and sum of the stored entries. *)
Definition row_sum_max (B : sparse) : Q := odflt (maxQ (map row_sum (b_rows B))).
Definition row_nnz_max (B : sparse) : Z := maxZ (map (fun r => Z.of_nat (length r)) (b_rows B)).
Definition entries (B : sparse) : list Q := flat_map (map snd) (b_rows B).
Definition entry_max (B : sparse) : Q := odflt (maxQ (entries B)).
Definition entry_min (B : sparse) : Q := - odflt (maxQ (map Qopp (entries B))).
Definition entry_sum (B : sparse) : Q := fold_right Qplus 0 (entries B).

(** An operation over an empty set ([lemma_b] with no pair, [entry_min] of a
    matrix with no entry, …) makes the attncheck kernel reject the formula, so
    the default value 0 never enters a valid certificate. *)

(** ** Band reachability: windowed causal attention *)

Local Open Scope nat_scope.

(** On L tokens, A[i][j] = 1 iff 0 ≤ i − j ≤ d (causal attention over a window of
    d + 1 tokens, −∞ bias outside).  A boolean row vector is the list of its L
    entries, index 0 first; an index past the end reads [false]. *)

(** The plain definition of one product: (v A)[j] = ∃ i ∈ j..j + d, v[i]. *)
Definition band_step_spec (d : nat) (v : list bool) : list bool :=
  map (fun j => existsb (fun i => nth i v false) (seq j (S d))) (seq 0 (length v)).

(** The same product in one pass from the right, carrying the distance from the
    current index to the nearest [true] at or after it ([None]: none).  Equal to
    [band_step_spec] ([band_step_eq] below); Coq computes with this one. *)
Fixpoint band_scan (d : nat) (v : list bool) : list bool * option nat :=
  match v with
  | [] => ([], None)
  | b :: v' =>
      let (w, g) := band_scan d v' in
      let g' := if b then Some 0%nat else option_map S g in
      ((match g' with Some k => Nat.leb k d | None => false end) :: w, g')
  end.
Definition band_step (d : nat) (v : list bool) : list bool := fst (band_scan d v).

(** The index of the first [true] ([None]: none). *)
Fixpoint first_true (v : list bool) : option nat :=
  match v with
  | [] => None
  | true :: _ => Some 0%nat
  | false :: v' => option_map S (first_true v')
  end.

Lemma band_scan_snd : forall d v, snd (band_scan d v) = first_true v.
Proof.
  intros d v. induction v as [|b v IH]; [reflexivity|].
  simpl. destruct (band_scan d v) as [w g]. simpl in *. subst g. destruct b; reflexivity.
Qed.

Lemma nth_first_true : forall v i, (forall k, first_true v = Some k -> (i < k)%nat) -> nth i v false = false.
Proof.
  induction v as [|b v IH]; intros i H; [destruct i; reflexivity|].
  destruct b.
  - specialize (H 0%nat eq_refl). lia.
  - destruct i; [reflexivity|]. simpl. apply IH. intros k Hk.
    specialize (H (S k)). simpl in H. rewrite Hk in H. simpl in H. specialize (H eq_refl). lia.
Qed.

Lemma nth_first_true_some : forall v k, first_true v = Some k -> nth k v false = true.
Proof.
  induction v as [|b v IH]; intros k H; [discriminate|].
  destruct b; simpl in H.
  - injection H as <-. reflexivity.
  - destruct (first_true v) as [k'|] eqn:E; [|discriminate]. injection H as <-. simpl. apply IH. reflexivity.
Qed.

Lemma nth_skipn' : forall j i (v : list bool), nth i (skipn j v) false = nth (j + i) v false.
Proof. induction j as [|j IH]; intros i v; [reflexivity|]. destruct v; [destruct i; reflexivity|]. apply IH. Qed.

(** The window j..j + n − 1 of v holds a [true] iff the first [true] of v at or
    after j is within n − 1 of j. *)
Lemma existsb_window : forall n v j,
  existsb (fun i => nth i v false) (seq j n) =
  match first_true (skipn j v) with Some k => Nat.ltb k n | None => false end.
Proof.
  intros n v j.
  destruct (existsb (fun i => nth i v false) (seq j n)) eqn:E.
  - apply existsb_exists in E as [i [Hi Hv]]. apply in_seq in Hi.
    destruct (first_true (skipn j v)) as [k|] eqn:F.
    + symmetry. apply Nat.ltb_lt.
      destruct (Nat.lt_ge_cases k (i - j)) as [Hk|Hk]; [lia|].
      destruct (Nat.eq_dec k (i - j)) as [->|Hne]; [lia|].
      exfalso. assert (Hn : nth (i - j) (skipn j v) false = false)
        by (apply nth_first_true; intros k' Hk'; rewrite F in Hk'; injection Hk' as <-; lia).
      rewrite nth_skipn' in Hn. replace (j + (i - j))%nat with i in Hn by lia. congruence.
    + exfalso. assert (Hn : nth (i - j) (skipn j v) false = false)
        by (apply nth_first_true; intros k' Hk'; congruence).
      rewrite nth_skipn' in Hn. replace (j + (i - j))%nat with i in Hn by lia. congruence.
  - destruct (first_true (skipn j v)) as [k|] eqn:F; [|reflexivity].
    destruct (Nat.ltb k n) eqn:L; [|reflexivity]. apply Nat.ltb_lt in L.
    apply nth_first_true_some in F. rewrite nth_skipn' in F.
    assert (Hin : existsb (fun i => nth i v false) (seq j n) = true)
      by (apply existsb_exists; exists (j + k)%nat; split; [apply in_seq; lia | exact F]).
    congruence.
Qed.

Lemma band_scan_fst : forall d v j, (j < length v)%nat ->
  nth j (fst (band_scan d v)) false =
  match first_true (skipn j v) with Some k => Nat.leb k d | None => false end.
Proof.
  intros d v. induction v as [|b v IH]; intros j Hj; [simpl in Hj; lia|].
  simpl. pose proof (band_scan_snd d v) as Hs. destruct (band_scan d v) as [w g]. simpl in Hs |- *.
  destruct j as [|j].
  - subst g. destruct b; reflexivity.
  - simpl in Hj. apply (IH j). lia.
Qed.

Lemma band_scan_length : forall d v, length (fst (band_scan d v)) = length v.
Proof.
  intros d v. induction v as [|b v IH]; [reflexivity|].
  simpl. destruct (band_scan d v) as [w g]. simpl in *. now rewrite IH.
Qed.

Lemma nth_map_seq : forall (f : nat -> bool) n j, (j < n)%nat -> nth j (map f (seq 0 n)) false = f j.
Proof.
  intros f n j Hj. rewrite (nth_indep _ false (f 0%nat)) by (rewrite map_length, seq_length; exact Hj).
  rewrite map_nth, seq_nth by exact Hj. reflexivity.
Qed.

Theorem band_step_eq : forall d v, band_step d v = band_step_spec d v.
Proof.
  intros d v. unfold band_step, band_step_spec.
  apply (nth_ext _ _ false false).
  - now rewrite map_length, seq_length, band_scan_length.
  - intros j Hj. rewrite band_scan_length in Hj.
    rewrite band_scan_fst by exact Hj.
    rewrite nth_map_seq by exact Hj.
    rewrite existsb_window.
    destruct (first_true (skipn j v)) as [k|]; [|reflexivity].
    destruct (Nat.leb k d) eqn:E1; destruct (Nat.ltb k (S d)) eqn:E2; try reflexivity;
      [apply Nat.leb_le in E1; apply Nat.ltb_ge in E2 | apply Nat.leb_gt in E1; apply Nat.ltb_lt in E2]; lia.
Qed.

(** e_{L−1} Aˡ: the last query's receptive field after l layers. *)
Definition band_vec (L d l : nat) : list bool :=
  Nat.iter l (band_step d) (repeat false (L - 1) ++ [true]).

Fixpoint count_true (v : list bool) : nat :=
  match v with [] => 0%nat | b :: v' => ((if b then 1 else 0) + count_true v')%nat end.

(** [band-reach]: the largest r with v[L − 1 − r] = 1; [band-reach-count]: the
    number of j with v[j] = 1 (the format's definitions, for v = e_{L−1} Aˡ). *)
Definition band_reach_nat (L d l : nat) : nat :=
  match first_true (band_vec L d l) with Some k => (L - 1 - k)%nat | None => 0%nat end.
Definition band_count_nat (L d l : nat) : nat := count_true (band_vec L d l).

(** The kernel's domain: 1 ≤ L ≤ 65536, d ≥ 0, 1 ≤ l ≤ 256. *)
Definition band_ok (L d l : Z) : bool :=
  (1 <=? L)%Z && (L <=? 65536)%Z && (0 <=? d)%Z && (1 <=? l)%Z && (l <=? 256)%Z.

Definition band_op (count : bool) (L d l : Z) : Z :=
  Z.of_nat ((if count then band_count_nat else band_reach_nat) (Z.to_nat L) (Z.to_nat d) (Z.to_nat l)).

(** ** The discrete map (D) in layer form (the [layer] datum)

    x_i^{k+1} = x_i^k + Δt V Σ_j P_ij(x^k) x_j^k,  P_ij(x) = e^{s_ij} / Σ_l e^{s_il},
    s_ij = ⟨Q x_i, K x_j⟩ = x_iᵀ (QᵀK) x_j, over the reals, as the format defines it:
    a token is a list of d reals, a configuration a list of n tokens, Q and K are
    m × d and V is d × d (lists of rows).  [layer_max_sqnorm],
    [layer_max_sqdist] and [layer_partition] are the format's max_i ‖x_i^{(r),k}‖²,
    max_i ‖x_i^{(r),k} − x_i^{(s),k}‖² and Σ_i Σ_j e^{s_ij}.  No certificate obligation is proven from
    these yet: iterating the map with [interval] costs far beyond the Coq budget
    (docs/coq.md, "What stays kernel-only"); they are the statement such a proof
    would have to reach. *)

Local Open Scope R_scope.

Fixpoint dotR (u v : list R) : R :=
  match u, v with a :: u', b :: v' => a * b + dotR u' v' | _, _ => 0 end.
Definition mvR (A : list (list R)) (x : list R) : list R := map (fun row => dotR row x) A.
Fixpoint vaddR (u v : list R) : list R :=
  match u, v with a :: u', b :: v' => (a + b) :: vaddR u' v' | _, _ => [] end.
Fixpoint vsubR (u v : list R) : list R :=
  match u, v with a :: u', b :: v' => (a - b) :: vsubR u' v' | _, _ => [] end.
Definition vscaleR (c : R) (u : list R) : list R := map (fun a => c * a) u.
Fixpoint sumR (l : list R) : R := match l with [] => 0 | a :: l' => a + sumR l' end.
(** The logit s_ij = ⟨Q x_i, K x_j⟩. *)
Definition logitR (Q K : list (list R)) (xi xj : list R) : R := dotR (mvR Q xi) (mvR K xj).
Definition softmaxR (s : list R) : list R :=
  let z := sumR (map exp s) in map (fun sj => exp sj / z) s.
(** Σ_j p_j x_j (n ≥ 1 tokens). *)
Fixpoint wsumR (p : list R) (x : list (list R)) : list R :=
  match p, x with
  | [a], [xj] => vscaleR a xj
  | a :: p', xj :: x' => vaddR (vscaleR a xj) (wsumR p' x')
  | _, _ => [] end.
Definition layer_stepR (Q K V : list (list R)) (dt : R) (x : list (list R)) : list (list R) :=
  map (fun xi => vaddR xi (vscaleR dt (mvR V (wsumR (softmaxR (map (logitR Q K xi) x)) x)))) x.
(** The maximum of a non-empty list. *)
Fixpoint maxR (l : list R) : R :=
  match l with [] => 0 | [a] => a | a :: l' => Rmax a (maxR l') end.
Definition sqnormR (u : list R) : R := dotR u u.

Record layer := Layer {
  l_q : list (list R); l_k : list (list R); l_v : list (list R); l_dt : R;
  l_runs : list (list (list R)) (* the initial configurations x^{(r),0} *) }.
Definition layer_iter (L : layer) (r k : nat) : list (list R) :=
  Nat.iter k (layer_stepR (l_q L) (l_k L) (l_v L) (l_dt L)) (nth r (l_runs L) []).
Definition layer_max_sqnorm (L : layer) (r k : nat) : R :=
  maxR (map sqnormR (layer_iter L r k)).
Definition layer_max_sqdist (L : layer) (r s k : nat) : R :=
  maxR (map sqnormR (zipw vsubR (layer_iter L r k) (layer_iter L s k))).
(** The partition sum Σ_i Σ_j e^{s_ij} of step k of run r ([layer-partition]):
    clusters/collapse's Lyapunov function 𝓛 = Σ_ij e^{⟨x_i, x_j⟩} when Q = K = I. *)
Definition layer_partition (L : layer) (r k : nat) : R :=
  let x := layer_iter L r k in
  sumR (map (fun xi => sumR (map (fun xj => exp (logitR (l_q L) (l_k L) xi xj)) x)) x).

(** The coordinate c of token i at step k of run r ([layer-coord]). *)
Definition layer_coord (L : layer) (r k i c : nat) : R := nth c (nth i (layer_iter L r k) []) 0.

(** The exact data of a [layer] datum as the certificate writes it (rationals; K =
    [lq_steps] is the number of steps the kernel iterates), and the layer over the
    reals it denotes. *)
Record layerQ := LayerQ {
  lq_q : list (list Q); lq_k : list (list Q); lq_v : list (list Q); lq_dt : Q;
  lq_steps : nat; lq_runs : list (list (list Q)) }.
Definition matR (M : list (list Q)) : list (list R) := map (map Q2R) M.
Definition layer_of_Q (L : layerQ) : layer :=
  Layer (matR (lq_q L)) (matR (lq_k L)) (matR (lq_v L)) (Q2R (lq_dt L)) (map matR (lq_runs L)).

(** The datum's exact scalars: [layer-v-frob2] = ‖V‖_F² = Σ_ab V_ab², [layer-qk-frob2] =
    ‖QᵀK‖_F² with (QᵀK)_ab = Σ_r Q_ra K_rb (a, b < d, the length of Q's rows), and
    [layer-dt] = Δt ([lq_dt]). *)
Definition frob2Q (M : list (list Q)) : Q :=
  fold_right (fun row acc => fold_right (fun a acc' => Qred (a * a + acc')%Q) acc row) 0%Q M.
Definition qtkQ (Qm Km : list (list Q)) : list (list Q) :=
  let d := length (hd [] Qm) in
  map (fun a => map (fun b =>
         fold_right (fun rs acc => Qred (nth a (fst rs) 0 * nth b (snd rs) 0 + acc)%Q) 0%Q (combine Qm Km))
       (seq 0 d)) (seq 0 d).

(** The dual functionals of [layer-dual-sup] and [layer-dual-inf]: a_i(λ) = row i
    of adj(V − λI), the adjugate by cofactors (determinant by expansion along the
    first row).  Since a_i(λ)(V − λI) = det(V − λI)·e_i, at an eigenvalue λ of V it
    is a left eigenvector or 0.  [layer_dual_at L r k lam i] is the point quantity
    max_j |a_i(lam)·x_j^{(r),k}|; the format's [layer-dual-sup X r k lo hi i] and
    [layer-dual-inf X r k lo hi i] are its sup and inf over lam ∈ [lo, hi] (lo ≤ hi
    exact rationals, i < d), a continuous function on a compact interval. *)
Definition drop_nth {A} (j : nat) (l : list A) : list A := firstn j l ++ skipn (S j) l.
Fixpoint det_n (n : nat) (A : list (list R)) : R :=
  match n, A with
  | O, _ => 1
  | S n', row :: rest =>
      sumR (map (fun j => (-1) ^ j * nth j row 0 * det_n n' (map (drop_nth j) rest)) (seq 0 (S n')))
  | S _, [] => 1
  end.
Definition detR (A : list (list R)) : R := det_n (length A) A.
(** adj(A)_ij = (−1)^{i+j} det(A without row j and column i). *)
Definition adj_row (A : list (list R)) (i : nat) : list R :=
  map (fun j => (-1) ^ (i + j) * detR (map (drop_nth i) (drop_nth j A))) (seq 0 (length A)).
(** V − λI. *)
Definition shiftR (V : list (list R)) (lam : R) : list (list R) :=
  map (fun a => map (fun b => nth b (nth a V []) 0 - (if Nat.eqb a b then lam else 0))
                    (seq 0 (length V))) (seq 0 (length V)).
Definition layer_dual_at (L : layer) (r k : nat) (lam : R) (i : nat) : R :=
  let a := adj_row (shiftR (l_v L) lam) i in
  maxR (map (fun xj => Rabs (dotR a xj)) (layer_iter L r k)).

(** Boxes: per coordinate an interval (lo, hi) of the reals. *)
Fixpoint in_boxv (b : list (R * R)) (x : list R) : Prop :=
  match b, x with
  | [], [] => True
  | lh :: b', a :: x' => fst lh <= a <= snd lh /\ in_boxv b' x'
  | _, _ => False end.
Fixpoint in_box (B : list (list (R * R))) (X : list (list R)) : Prop :=
  match B, X with
  | [], [] => True
  | b :: B', x :: X' => in_boxv b x /\ in_box B' X'
  | _, _ => False end.

(** Takes a hypothesis [in_box B X] with B concrete (after [simpl]) apart into
    one real variable per coordinate with its two bounds. *)
Ltac destruct_box :=
  repeat match goal with
  | H : False |- _ => contradiction H
  | H : True |- _ => clear H
  | H : _ /\ _ |- _ => destruct H
  | H : context [match ?X with [] => _ | _ :: _ => _ end] |- _ =>
      is_var X; destruct X; cbv iota beta in H
  end.

(** ** The papers' building blocks

    docs/certificate-format.md, "Building blocks": each block of the format is
    defined by one expansion into core operators, which the kernel's reader
    writes out before anything reads the formula, so a generated statement
    contains the expansion (its [let]s substituted).  Here each block is the
    named function a reader of the papers knows, and a lemma says that the
    expansion, as a generated statement writes it, is that function: the
    expansion adds a guard [0 * g1 * … * gk] whose factors are partial
    operations defined exactly on the block's domain (the statement carries
    their domain conditions, 0 < x for [ln x] and 0 <= x for [sqrt x], like any
    other), and which is 0.

    - [alibi_slope h H] = 2^(−8h/H), for integers 1 <= h <= H;
    - [alibi_tail m d w] = T^∞ = e^Δ e^(−mw) / (1 − e^(−mw) + e^Δ e^(−mw)),
      for m > 0, Δ >= 0 and an integer w >= 0;
    - [alibi_window m d eps] = ⌈(1/m) ln((e^Δ (1 − ε) + ε)/ε)⌉, for m > 0,
      Δ >= 0, 0 < ε < 1;
    - [union_bound_dim n t delta] = ⌈(2/t²) ln(n²/δ)⌉, for an integer n >= 1,
      t > 0, 0 < δ < 1. *)

Local Open Scope R_scope.

Definition alibi_slope (h H : R) : R := exp (- (8 * h / H * ln 2)).

Lemma alibi_slope_expansion : forall h H,
  exp (- (8 * h / H * ln 2))
    + 0 * sqrt (h - 1) * sqrt (H - h) * sqrt (Rfloor h - h) * sqrt (Rfloor H - H)
  = alibi_slope h H.
Proof. intros h H. unfold alibi_slope. ring. Qed.

Definition alibi_tail (m d w : R) : R :=
  exp d * exp (- (m * w)) / (1 - exp (- (m * w)) + exp d * exp (- (m * w))).

Lemma alibi_tail_expansion : forall m d w,
  exp d * exp (- (m * w)) / (1 - exp (- (m * w)) + exp d * exp (- (m * w)))
    + 0 * ln m * sqrt d * sqrt w * sqrt (Rfloor w - w)
  = alibi_tail m d w.
Proof. intros m d w. unfold alibi_tail. ring. Qed.

Definition alibi_window (m d eps : R) : R :=
  Rceil (ln ((exp d * (1 - eps) + eps) / eps) / m).

Lemma alibi_window_expansion : forall m d eps,
  Rceil (ln ((exp d * (1 - eps) + eps) / eps) / m
         + 0 * ln m * sqrt d * ln eps * ln (1 - eps))
  = alibi_window m d eps.
Proof.
  intros m d eps. unfold alibi_window. f_equal. ring.
Qed.

(** T^∞(m, Δ, w) <= ε exactly when w >= (1/m) ln((e^Δ (1 − ε) + ε)/ε). *)
Lemma alibi_tail_le_iff : forall m d w eps, 0 < m -> 0 <= d -> 0 < eps < 1 ->
  alibi_tail m d w <= eps <-> ln ((exp d * (1 - eps) + eps) / eps) / m <= w.
Proof.
  intros m d w eps Hm Hd He. unfold alibi_tail.
  set (x := exp (- (m * w))). set (E := exp d).
  assert (Hx : 0 < x) by apply exp_pos.
  assert (HE : 1 <= E).
  { unfold E. rewrite <- exp_0. destruct Hd as [Hd|Hd].
    - left. apply exp_increasing, Hd.
    - right. rewrite Hd. reflexivity. }
  set (D := 1 - x + E * x).
  assert (HD : 0 < D) by (unfold D; nra).
  set (K := E * (1 - eps) + eps).
  assert (HK : 0 < K) by (unfold K; nra).
  (* step 1: E x / D <= eps <-> x * K <= eps *)
  assert (S1 : E * x / D <= eps <-> x * K <= eps).
  { split; intro H.
    - assert (E * x <= eps * D).
      { replace (E * x) with (E * x / D * D) by (field; lra).
        apply Rmult_le_compat_r; lra. }
      unfold K. unfold D in H0. nra.
    - assert (E * x <= eps * D) by (unfold D; unfold K in H; nra).
      replace eps with (eps * D / D) by (field; lra).
      unfold Rdiv. apply Rmult_le_compat_r; [left; apply Rinv_0_lt_compat, HD | lra]. }
  (* step 2: x * K <= eps <-> ln (K / eps) <= m * w *)
  assert (S2 : x * K <= eps <-> ln (K / eps) <= m * w).
  { assert (HKe : 0 < K / eps) by (apply Rdiv_lt_0_compat; lra).
    split; intro H.
    - assert (x <= eps / K).
      { apply Rmult_le_reg_r with K; [exact HK|]. replace (eps / K * K) with eps by (field; lra). exact H. }
      assert (ln x <= ln (eps / K)).
      { destruct H0 as [H0|H0]; [left; apply ln_increasing; assumption | right; rewrite H0; reflexivity]. }
      unfold x in H1. rewrite ln_exp in H1.
      replace (eps / K) with (/ (K / eps)) in H1 by (field; lra).
      rewrite ln_Rinv in H1 by exact HKe. lra.
    - assert (ln (eps / K) >= - (m * w)).
      { replace (eps / K) with (/ (K / eps)) by (field; lra). rewrite ln_Rinv by exact HKe. lra. }
      assert (x <= eps / K).
      { unfold x. rewrite <- (exp_ln (eps / K)) by (apply Rdiv_lt_0_compat; lra).
        destruct (Rle_or_lt (- (m * w)) (ln (eps / K))) as [Hl|Hl].
        - destruct Hl as [Hl|Hl]; [left; apply exp_increasing, Hl | right; rewrite Hl; reflexivity].
        - lra. }
      apply Rmult_le_reg_r with (/ K); [apply Rinv_0_lt_compat, HK|].
      replace (x * K * / K) with x by (field; lra). replace (eps * / K) with (eps / K) by reflexivity. exact H1. }
  (* step 3: ln (K / eps) / m <= w <-> ln (K / eps) <= m * w *)
  assert (S3 : ln (K / eps) / m <= w <-> ln (K / eps) <= m * w).
  { split; intro H.
    - apply Rmult_le_compat_l with (r := m) in H; [|lra].
      replace (m * (ln (K / eps) / m)) with (ln (K / eps)) in H by (field; lra). exact H.
    - apply Rmult_le_reg_l with m; [exact Hm|].
      replace (m * (ln (K / eps) / m)) with (ln (K / eps)) by (field; lra). exact H. }
  fold x E D K. rewrite S1, S2. symmetry. exact S3.
Qed.

Lemma Rceil_bounds : forall x, x <= Rceil x /\ Rceil x - 1 < x.
Proof.
  intros x. unfold Rceil. destruct (archimed (- x)) as [H1 H2].
  rewrite minus_IZR. lra.
Qed.

(** The window is minimal: T^∞ at w_ε is at most ε, and above ε one step before
    (positional.md, positional/alibi-window), for every m > 0, Δ >= 0, 0 < ε < 1. *)
Lemma alibi_window_minimal : forall m d eps, 0 < m -> 0 <= d -> 0 < eps < 1 ->
  alibi_tail m d (alibi_window m d eps) <= eps /\
  eps < alibi_tail m d (alibi_window m d eps - 1).
Proof.
  intros m d eps Hm Hd He. unfold alibi_window.
  destruct (Rceil_bounds (ln ((exp d * (1 - eps) + eps) / eps) / m)) as [B1 B2].
  split.
  - apply (alibi_tail_le_iff m d _ eps Hm Hd He). exact B1.
  - apply Rnot_le_lt. intro H. apply (alibi_tail_le_iff m d _ eps Hm Hd He) in H. lra.
Qed.

Definition union_bound_dim (n t delta : R) : R :=
  Rceil (2 / (t * t) * ln (n * n / delta)).

Lemma union_bound_dim_expansion : forall n t delta,
  Rceil (2 / (t * t) * ln (n * n / delta)
         + 0 * sqrt (n - 1) * sqrt (Rfloor n - n) * ln t * ln delta * ln (1 - delta))
  = union_bound_dim n t delta.
Proof.
  intros n t delta. unfold union_bound_dim. f_equal. ring.
Qed.


Local Open Scope Q_scope.

(** ** Exact terms and formulas, decided by computation *)

Local Open Scope R_scope.

Inductive term : Type :=
| TInt (z : Z)                    (* z *)
| TFrac (p : Z) (q : positive)    (* p / q *)
| TVar (n : nat)                  (* the n-th enclosing bound integer (de Bruijn) *)
| TAdd (a b : term) | TSub (a b : term) | TMul (a b : term) | TDiv (a b : term)
| TNeg (a : term) | TAbs (a : term) | TMin (a b : term) | TMax (a b : term)
| TPow (a : term) (n : Z)         (* a ^ n, n an integer *)
| TCeil (a : term) | TFloor (a : term)
| TSum (lo hi : Z) (body : term)  (* Σ_{k = lo}^{hi} body[k] *)
| TZ (z : Z)                      (* an integer data operation, e.g. gram_max_abs S *)
| TQ (q : Q)                      (* a rational data operation, e.g. err_max S B *)
| TBand (count : bool) (L d l : term). (* band-reach (count = false) or band-reach-count of L d l *)

(** The integer an integer-valued real denotes (its floor: the format gives the
    band operations exact integers, so the floor is the value itself). *)
Definition Zfloor (x : R) : Z := (up x - 1)%Z.

Fixpoint denote (env : list Z) (t : term) : R :=
  match t with
  | TInt z => IZR z
  | TFrac p q => IZR p / IZR (Zpos q)
  | TVar n => IZR (nth n env 0%Z)
  | TAdd a b => denote env a + denote env b
  | TSub a b => denote env a - denote env b
  | TMul a b => denote env a * denote env b
  | TDiv a b => denote env a / denote env b
  | TNeg a => - denote env a
  | TAbs a => Rabs (denote env a)
  | TMin a b => Rmin (denote env a) (denote env b)
  | TMax a b => Rmax (denote env a) (denote env b)
  | TPow a n => match n with
                | Zneg p => / denote env a ^ Pos.to_nat p
                | _ => denote env a ^ Z.to_nat n
                end
  | TCeil a => Rceil (denote env a)
  | TFloor a => Rfloor (denote env a)
  | TSum lo hi b => sumZ lo hi (fun k => denote (k :: env) b)
  | TZ z => IZR z
  | TQ q => Q2R q
  | TBand c L d l => IZR (band_op c (Zfloor (denote env L)) (Zfloor (denote env d)) (Zfloor (denote env l)))
  end.

Local Open Scope Q_scope.

(** q^n by repeated multiplication, without [Qred]: a power of a reduced
    fraction is reduced, so a gcd per step would only cost time (2^k: O(k)). *)
Fixpoint qpow (q : Q) (n : nat) : Q :=
  match n with O => 1 | S n' => q * qpow q n' end.

Definition lift2 (f : Q -> Q -> Q) (a b : option Q) : option Q :=
  match a, b with Some x, Some y => Some (Qred (f x y)) | _, _ => None end.

Fixpoint evalq (env : list Z) (t : term) : option Q :=
  match t with
  | TInt z => Some (inject_Z z)
  | TFrac p q => Some (p # q)
  | TVar n => Some (inject_Z (nth n env 0%Z))
  | TAdd a b => lift2 Qplus (evalq env a) (evalq env b)
  | TSub a b => lift2 Qminus (evalq env a) (evalq env b)
  | TMul a b => lift2 Qmult (evalq env a) (evalq env b)
  | TDiv a b => match evalq env a, evalq env b with
                | Some x, Some y => if Qeq_bool y 0 then None else Some (Qred (x / y))
                | _, _ => None end
  | TNeg a => option_map Qopp (evalq env a)
  | TAbs a => option_map Qabs (evalq env a)
  | TMin a b => lift2 (fun x y => if Qle_bool x y then x else y) (evalq env a) (evalq env b)
  | TMax a b => lift2 (fun x y => if Qle_bool x y then y else x) (evalq env a) (evalq env b)
  | TPow a n => match evalq env a, n with
                | Some x, Zneg p => if Qeq_bool x 0 then None else Some (Qinv (qpow x (Pos.to_nat p)))
                | Some x, _ => Some (qpow x (Z.to_nat n))
                | None, _ => None end
  | TCeil a => option_map (fun x => inject_Z (Qceiling x)) (evalq env a)
  | TFloor a => option_map (fun x => inject_Z (Qfloor x)) (evalq env a)
  | TSum lo hi b =>
      fold_right (fun k acc => lift2 Qplus (evalq (k :: env) b) acc) (Some 0) (rangeZ lo hi)
  | TZ z => Some (inject_Z z)
  | TQ q => Some q
  | TBand c L d l =>
      match evalq env L, evalq env d, evalq env l with
      | Some x, Some y, Some z =>
          if (Pos.eqb (Qden x) 1 && Pos.eqb (Qden y) 1 && Pos.eqb (Qden z) 1
              && band_ok (Qnum x) (Qnum y) (Qnum z))%bool
          then Some (inject_Z (band_op c (Qnum x) (Qnum y) (Qnum z))) else None
      | _, _, _ => None
      end
  end.

Local Open Scope R_scope.

Lemma Q2R_inject_Z : forall z, Q2R (inject_Z z) = IZR z.
Proof. intros z. unfold Q2R, inject_Z. simpl. field. Qed.

Lemma Q2R_red : forall q, Q2R (Qred q) = Q2R q.
Proof. intros q. apply Qeq_eqR, Qred_correct. Qed.

Lemma Q2R_le_bool : forall x y, Qle_bool x y = true -> Q2R x <= Q2R y.
Proof. intros x y H. apply Qle_Rle, Qle_bool_iff, H. Qed.

Lemma Q2R_not_le_bool : forall x y, Qle_bool x y = false -> Q2R y < Q2R x.
Proof.
  intros x y H. apply Qlt_Rlt. apply Qnot_le_lt. intro H'.
  apply Qle_bool_iff in H'. congruence.
Qed.

Lemma Q2R_abs : forall x, Q2R (Qabs x) = Rabs (Q2R x).
Proof.
  intros x. destruct (Qlt_le_dec x 0) as [H|H].
  - rewrite Qabs_neg by (apply Qlt_le_weak, H). rewrite Q2R_opp.
    rewrite Rabs_left; auto. rewrite <- RMicromega.Q2R_0. apply Qlt_Rlt, H.
  - rewrite Qabs_pos by exact H. rewrite Rabs_pos_eq; auto.
    rewrite <- RMicromega.Q2R_0. apply Qle_Rle, H.
Qed.

Lemma Q2R_qpow : forall x n, Q2R (qpow x n) = Q2R x ^ n.
Proof.
  intros x n. induction n as [|n IH]; cbn [qpow pow].
  - unfold Q2R. simpl. field.
  - rewrite Q2R_mult, IH. reflexivity.
Qed.

Lemma Q2R_ceiling : forall x, Rceil (Q2R x) = IZR (Qceiling x).
Proof.
  intros x. symmetry. apply Rceil_eq. split.
  - rewrite <- minus_IZR, <- Q2R_inject_Z. apply Qlt_Rlt, Qceiling_lt.
  - rewrite <- Q2R_inject_Z. apply Qle_Rle, Qle_ceiling.
Qed.

Lemma Q2R_floor : forall x, Rfloor (Q2R x) = IZR (Qfloor x).
Proof.
  intros x. symmetry. apply Rfloor_eq. split.
  - rewrite <- Q2R_inject_Z. apply Qle_Rle, Qfloor_le.
  - rewrite <- plus_IZR, <- Q2R_inject_Z. apply Qlt_Rlt, Qlt_floor.
Qed.

Lemma Zfloor_Q2R : forall x, Pos.eqb (Qden x) 1 = true -> Zfloor (Q2R x) = Qnum x.
Proof.
  intros [p q] H. apply Pos.eqb_eq in H. simpl in H. subst q. unfold Zfloor, Q2R. simpl.
  replace (IZR p * / 1) with (IZR p) by field.
  apply eq_IZR. change (Rfloor (IZR p) = IZR p). symmetry. apply Rfloor_eq. lra.
Qed.

Lemma Qeq_bool_false_R : forall x, Qeq_bool x 0 = false -> ~ x == 0%Q.
Proof. intros x H H'. apply Qeq_bool_iff in H'. congruence. Qed.

Lemma some_inv : forall (x y : Q), Some x = Some y -> y = x.
Proof. intros x y H. congruence. Qed.
Ltac inj H := apply some_inv in H; subst.

Ltac grab H :=
  repeat match type of H with
  | context [evalq ?e ?u] =>
      let E := fresh "E" in destruct (evalq e u) eqn:E; [|discriminate]
  end.

Theorem evalq_sound : forall t env r, evalq env t = Some r -> denote env t = Q2R r.
Proof.
  induction t; intros env r H; cbn [evalq denote] in H |- *; unfold lift2, option_map in H; grab H.
  - inj H. symmetry. apply Q2R_inject_Z.
  - inj H. unfold Q2R. reflexivity.
  - inj H. symmetry. apply Q2R_inject_Z.
  - inj H. rewrite Q2R_red, Q2R_plus. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - inj H. rewrite Q2R_red, Q2R_minus. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - inj H. rewrite Q2R_red, Q2R_mult. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - destruct (Qeq_bool q0 0) eqn:Z0; [discriminate|]. inj H.
    rewrite Q2R_red, Q2R_div by (apply Qeq_bool_false_R; exact Z0).
    erewrite IHt1, IHt2 by eassumption. reflexivity.
  - inj H. rewrite Q2R_opp. erewrite IHt by eassumption. reflexivity.
  - inj H. rewrite Q2R_abs. erewrite IHt by eassumption. reflexivity.
  - inj H. rewrite Q2R_red. erewrite IHt1, IHt2 by eassumption.
    destruct (Qle_bool q q0) eqn:L.
    + apply Rmin_left, Q2R_le_bool, L.
    + apply Rmin_right, Rlt_le, Q2R_not_le_bool, L.
  - inj H. rewrite Q2R_red. erewrite IHt1, IHt2 by eassumption.
    destruct (Qle_bool q q0) eqn:L.
    + apply Rmax_right, Q2R_le_bool, L.
    + apply Rmax_left, Rlt_le, Q2R_not_le_bool, L.
  - erewrite IHt by eassumption. destruct n.
    + inj H. apply eq_sym, Q2R_qpow.
    + inj H. apply eq_sym, Q2R_qpow.
    + destruct (Qeq_bool q 0) eqn:Z0; [discriminate|]. inj H.
      assert (Hn : Q2R q <> 0).
      { intro H0. apply (Qeq_bool_false_R q Z0). apply eqR_Qeq. rewrite RMicromega.Q2R_0. exact H0. }
      rewrite Q2R_inv.
      * rewrite Q2R_qpow. reflexivity.
      * intro Hz. apply Qeq_eqR in Hz. rewrite Q2R_qpow, RMicromega.Q2R_0 in Hz.
        apply (pow_nonzero (Q2R q) (Pos.to_nat p) Hn Hz).
  - inj H. erewrite IHt by eassumption. rewrite Q2R_inject_Z. apply Q2R_ceiling.
  - inj H. erewrite IHt by eassumption. rewrite Q2R_inject_Z. apply Q2R_floor.
  - unfold sumZ. revert r H. induction (rangeZ lo hi) as [|k l IHl]; intros r H; cbn [fold_right] in H |- *.
    + inj H. unfold Q2R. simpl. field.
    + unfold lift2 in H. destruct (evalq (k :: env) t) eqn:E1; [|discriminate].
      destruct (fold_right _ _ l) eqn:E2; [|discriminate]. inj H.
      rewrite Q2R_red, Q2R_plus. erewrite IHt by eassumption. rewrite (IHl q0 eq_refl). reflexivity.
  - inj H. symmetry. apply Q2R_inject_Z.
  - inj H. reflexivity.
  - destruct (Pos.eqb (Qden q) 1 && Pos.eqb (Qden q0) 1 && Pos.eqb (Qden q1) 1
              && band_ok (Qnum q) (Qnum q0) (Qnum q1))%bool eqn:B; [|discriminate].
    inj H. rewrite Q2R_inject_Z.
    apply andb_true_iff in B as [B B4]. apply andb_true_iff in B as [B B3].
    apply andb_true_iff in B as [B1 B2].
    erewrite IHt1, IHt2, IHt3 by eassumption.
    rewrite (Zfloor_Q2R q B1), (Zfloor_Q2R q0 B2), (Zfloor_Q2R q1 B3). reflexivity.
Qed.

Inductive form : Type :=
| FTrue
| FLe (a b : term) | FLt (a b : term) | FGe (a b : term) | FGt (a b : term)
| FEq (a b : term) | FNe (a b : term)
| FAnd (f g : form) | FOr (f g : form)
| FAll (lo hi : Z) (f : form)     (* ∀ k ∈ lo..hi, f[k] *)
| FEx (lo hi : Z) (f : form).     (* ∃ k ∈ lo..hi, f[k] *)

Fixpoint fdenote (env : list Z) (f : form) : Prop :=
  match f with
  | FTrue => True
  | FLe a b => denote env a <= denote env b
  | FLt a b => denote env a < denote env b
  | FGe a b => denote env a >= denote env b
  | FGt a b => denote env a > denote env b
  | FEq a b => denote env a = denote env b
  | FNe a b => denote env a <> denote env b
  | FAnd f g => fdenote env f /\ fdenote env g
  | FOr f g => fdenote env f \/ fdenote env g
  | FAll lo hi f => forall k : Z, (lo <= k <= hi)%Z -> fdenote (k :: env) f
  | FEx lo hi f => exists k : Z, (lo <= k <= hi)%Z /\ fdenote (k :: env) f
  end.

Definition cmp (c : Q -> Q -> bool) (a b : option Q) : bool :=
  match a, b with Some x, Some y => c x y | _, _ => false end.

Fixpoint decide (env : list Z) (f : form) : bool :=
  match f with
  | FTrue => true
  | FLe a b => cmp Qle_bool (evalq env a) (evalq env b)
  | FLt a b => cmp (fun x y => negb (Qle_bool y x)) (evalq env a) (evalq env b)
  | FGe a b => cmp (fun x y => Qle_bool y x) (evalq env a) (evalq env b)
  | FGt a b => cmp (fun x y => negb (Qle_bool x y)) (evalq env a) (evalq env b)
  | FEq a b => cmp Qeq_bool (evalq env a) (evalq env b)
  | FNe a b => cmp (fun x y => negb (Qeq_bool x y)) (evalq env a) (evalq env b)
  | FAnd f g => decide env f && decide env g
  | FOr f g => decide env f || decide env g
  | FAll lo hi f => forallb (fun k => decide (k :: env) f) (rangeZ lo hi)
  | FEx lo hi f => existsb (fun k => decide (k :: env) f) (rangeZ lo hi)
  end.

Lemma cmp_sound : forall c (P : R -> R -> Prop) env a b,
  (forall x y, c x y = true -> P (Q2R x) (Q2R y)) ->
  cmp c (evalq env a) (evalq env b) = true -> P (denote env a) (denote env b).
Proof.
  intros c P env a b Hc H. unfold cmp in H.
  destruct (evalq env a) eqn:Ea; [|discriminate]. destruct (evalq env b) eqn:Eb; [|discriminate].
  rewrite (evalq_sound _ _ _ Ea), (evalq_sound _ _ _ Eb). apply Hc, H.
Qed.

(** The band operations by hand (L = 5, d = 1: the last row of A is {3, 4}, of A²
    {2, 3, 4}), and at the edges of their domain, where [evalq] decides nothing. *)
Example band_by_hand :
  (band_op false 5 1 1 = 1 /\ band_op true 5 1 1 = 2 /\ band_op false 5 1 2 = 2 /\
   band_op true 5 1 2 = 3 /\ band_op false 5 3 2 = 4 /\ band_op true 5 3 2 = 5 /\
   band_op false 5 0 7 = 0 /\ band_op true 5 0 7 = 1)%Z.
Proof. vm_compute. repeat split. Qed.

Example band_domain_edges :
  map (evalq nil) [TBand false (TInt 0) (TInt 1) (TInt 1); TBand false (TInt 5) (TInt (-1)) (TInt 1);
                   TBand false (TInt 5) (TInt 1) (TInt 0); TBand true (TInt 5) (TInt 1) (TInt 257);
                   TBand true (TInt 65537) (TInt 1) (TInt 1); TBand false (TFrac 9 2) (TInt 1) (TInt 1)]
  = [None; None; None; None; None; None].
Proof. vm_compute. reflexivity. Qed.

Theorem decide_sound : forall f env, decide env f = true -> fdenote env f.
Proof.
  induction f; intros env H; simpl in H |- *.
  - exact I.
  - revert H. apply cmp_sound. intros x y. apply Q2R_le_bool.
  - revert H. apply cmp_sound. intros x y Hb. apply Q2R_not_le_bool.
    destruct (Qle_bool y x); [discriminate|reflexivity].
  - revert H. apply cmp_sound. intros x y Hb. apply Rle_ge, Q2R_le_bool, Hb.
  - revert H. apply cmp_sound. intros x y Hb. apply Q2R_not_le_bool.
    destruct (Qle_bool x y); [discriminate|reflexivity].
  - revert H. apply cmp_sound. intros x y Hb. apply Qeq_eqR, Qeq_bool_iff, Hb.
  - revert H. apply (cmp_sound _ (fun x y => x <> y)). intros x y Hb He. apply eqR_Qeq, Qeq_bool_iff in He.
    rewrite He in Hb. discriminate.
  - apply andb_true_iff in H as [H1 H2]. split; [apply IHf1 | apply IHf2]; assumption.
  - apply orb_true_iff in H as [H1|H2]; [left; apply IHf1 | right; apply IHf2]; assumption.
  - intros k Hk. rewrite forallb_forall in H. apply IHf, H, in_rangeZ, Hk.
  - apply existsb_exists in H as [k [Hk Hd]]. exists k. split.
    + apply in_rangeZ, Hk.
    + apply IHf, Hd.
Qed.

(** ** Tactics used by generated files *)

(** Proves an exact obligation: the goal must be (convertible to) [fdenote [] f];
    the kernel runs [decide [] f] once, in the virtual machine, at [Qed]. *)
Ltac decide_exact f :=
  change (fdenote nil f); apply (decide_sound f nil); vm_cast_no_check (eq_refl true).

(** Unrolls every [sumZ lo hi f] (constant bounds) into f lo + (… + (f hi + 0)),
    after writing out the block products of [ln_blocks] (computed by the VM). *)
Ltac unroll_sums :=
  repeat match goal with
  | |- context [ln_blocks ?lo ?hi ?k] =>
      let l := eval vm_compute in (ln_blocks lo hi k) in
      rewrite (eq_refl l <: ln_blocks lo hi k = l);
      (* cbv, not cbn: cbn takes 21 s on 431 blocks, cbv 0.03 s *)
      cbv beta iota delta [map fold_right]
  end;
  repeat match goal with
  | |- context [sumZ ?lo ?hi ?f] =>
      let l := eval vm_compute in (rangeZ lo hi) in
      change (sumZ lo hi f) with (fold_right (fun k acc => f k + acc) 0 l)
  end;
  cbn beta iota delta [fold_right].

(** Turns a goal ∀ k, lo ≤ k ≤ hi → P k into one goal P k per k in lo..hi, in
    order.  P is named explicitly (so that a body which is itself a ∀, as in a
    nested [forall], is not taken for part of the pattern), and the list is
    taken apart with [Forall_cons] and [Forall_nil] only, on goals that are
    syntactically [Forall] (so an instance P k is never unfolded in vain):
    [constructor] would also turn a goal a ≤ b, which is [a < b \/ a = b],
    into a < b. *)
Ltac unroll_forall :=
  match goal with
  | |- forall k : Z, (?lo <= k <= ?hi)%Z -> @?P k =>
      refine (Forall_rangeZ lo hi P _);
      let l := eval vm_compute in (rangeZ lo hi) in
      change (rangeZ lo hi) with l;
      repeat match goal with
             | |- Forall _ [] => apply Forall_nil
             | |- Forall _ (_ :: _) => apply Forall_cons
             end; cbv beta
  end.

(** * The layer map by reflection, in interval arithmetic

    [verify --coq] proves the obligations over the [layer] datum ([layer-max-sqnorm],
    [layer-max-sqdist], [layer-partition], [layer-coord]) by one computation each: the
    functor [LayerEval] evaluates the map in CoqInterval's interval arithmetic (on
    primitive floats, [LP], or on big-integer floats of any precision, [LB]), step
    by step in the kernel's form (layer_map.rs: the softmax as 1 / (1 + R_j / E_j)
    around a shift, Σ_j P_ij x_j as x_i + Σ_{j≠i} P_ij (x_j − x_i)), and proves that
    every enclosure contains the value of the map over the reals, [layer_stepR]
    ([layer_stepI_c], [build_ok]; the identities of the kernel's form are
    [nth_softmax_shift] and [wsum_centred]). A formula over these quantities is
    reflected ([xform], [xterm]: its meaning [xfden] is the statement as a generated
    file writes it) and decided on the enclosures ([xdecide]: a comparison holds when
    the enclosures are ordered, [xcheck_sound]); a partial operation outside its
    domain gives no enclosure, so nothing is decided there. *)
From Interval Require Import Interval.Interval Interval.Float_full Float.Sig Float.Basic Real.Xreal.
From Interval Require Import Float.Primitive_ops Tactic.

Section LayerReal.
Local Open Scope R_scope.

(** Σ_{j<n} f j, head first (as [sumR]). *)
Fixpoint sumn (n : nat) (f : nat -> R) : R :=
  match n with O => 0 | S n' => f O + sumn n' (fun j => f (S j)) end.

Lemma sumn_ext : forall n f g, (forall j, (j < n)%nat -> f j = g j) -> sumn n f = sumn n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [reflexivity|].
  rewrite (H O) by lia. f_equal. apply IH. intros j Hj. apply H. lia.
Qed.

Lemma sumn_plus : forall n f g, sumn n (fun j => f j + g j) = sumn n f + sumn n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma sumn_scal : forall n c f, sumn n (fun j => c * f j) = c * sumn n f.
Proof. induction n as [|n IH]; intros c f; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma sumR_sumn : forall l, sumR l = sumn (length l) (fun j => nth j l 0).
Proof. induction l as [|a l IH]; simpl; [reflexivity|]. rewrite IH. reflexivity. Qed.

Lemma sumR_map_pos : forall (f : R -> R) l, (forall x, 0 < f x) -> l <> [] -> 0 < sumR (map f l).
Proof.
  intros f. induction l as [|a l IH]; intros Hf Hl; [congruence|]. simpl.
  pose proof (Hf a). destruct l as [|b l]; simpl; [lra|].
  assert (0 < sumR (map f (b :: l))) by (apply IH; [exact Hf | discriminate]). simpl in H0. lra.
Qed.

(** Vectors, component by component. *)
Lemma vaddR_length : forall u v, length (vaddR u v) = Nat.min (length u) (length v).
Proof. induction u as [|a u IH]; intros [|b v]; simpl; auto. Qed.
Lemma vsubR_length : forall u v, length (vsubR u v) = Nat.min (length u) (length v).
Proof. induction u as [|a u IH]; intros [|b v]; simpl; auto. Qed.
Lemma vscaleR_length : forall c u, length (vscaleR c u) = length u.
Proof. intros. apply map_length. Qed.
Lemma mvR_length : forall A x, length (mvR A x) = length A.
Proof. intros. apply map_length. Qed.

Lemma nth_vaddR : forall u v c, (c < length u)%nat -> (c < length v)%nat ->
  nth c (vaddR u v) 0 = nth c u 0 + nth c v 0.
Proof.
  induction u as [|a u IH]; intros [|b v] c Hu Hv; simpl in *; try lia.
  destruct c; [reflexivity|]. apply IH; lia.
Qed.
Lemma nth_vsubR : forall u v c, (c < length u)%nat -> (c < length v)%nat ->
  nth c (vsubR u v) 0 = nth c u 0 - nth c v 0.
Proof.
  induction u as [|a u IH]; intros [|b v] c Hu Hv; simpl in *; try lia.
  destruct c; [reflexivity|]. apply IH; lia.
Qed.
Lemma nth_vscaleR : forall a u c, nth c (vscaleR a u) 0 = a * nth c u 0.
Proof.
  intros a u c. unfold vscaleR. revert c. induction u as [|b u IH]; intros [|c]; simpl; try ring; auto.
Qed.

Lemma nth_map_R : forall {A} (f : A -> R) l j (a : A) (d : R), (j < length l)%nat ->
  nth j (map f l) d = f (nth j l a).
Proof.
  intros A f l j a d Hj. rewrite (nth_indep _ d (f a)) by (rewrite map_length; exact Hj).
  apply map_nth.
Qed.

(** The softmax, entry by entry. *)
Lemma softmaxR_length : forall s, length (softmaxR s) = length s.
Proof. intros. unfold softmaxR. apply map_length. Qed.
Lemma nth_softmaxR : forall s j, (j < length s)%nat ->
  nth j (softmaxR s) 0 = exp (nth j s 0) / sumR (map exp s).
Proof.
  intros s j Hj. unfold softmaxR. cbv zeta. rewrite (nth_map_R _ _ _ 0) by exact Hj. reflexivity.
Qed.

(** Σ_{l ≠ j} of a list. *)
Fixpoint sum_but (j : nat) (l : list R) {struct l} : R :=
  match l with
  | [] => 0
  | a :: l' => match j with O => sumR l' | S j' => a + sum_but j' l' end end.

Lemma sum_but_split : forall l j, (j < length l)%nat -> sumR l = nth j l 0 + sum_but j l.
Proof.
  induction l as [|a l IH]; intros j Hj; simpl in *; [lia|].
  destruct j as [|j]; simpl; [reflexivity|]. rewrite (IH j) by lia. ring.
Qed.

Lemma sumR_nonneg : forall l, (forall x, In x l -> 0 <= x) -> 0 <= sumR l.
Proof.
  induction l as [|a l IH]; intros H; simpl; [lra|].
  assert (0 <= a) by (apply H; left; reflexivity).
  assert (0 <= sumR l) by (apply IH; intros x Hx; apply H; right; exact Hx). lra.
Qed.

Lemma sum_but_nonneg : forall l j, (forall x, In x l -> 0 <= x) -> 0 <= sum_but j l.
Proof.
  induction l as [|a l IH]; intros j H; simpl; [lra|].
  assert (Hl : forall x, In x l -> 0 <= x) by (intros; apply H; right; assumption).
  destruct j as [|j].
  - apply sumR_nonneg, Hl.
  - assert (0 <= a) by (apply H; left; reflexivity). pose proof (IH j Hl). lra.
Qed.

Lemma fold_left_plus : forall l a, fold_left Rplus l a = a + sumR l.
Proof. induction l as [|b l IH]; intros a; simpl; [ring|]. rewrite IH. ring. Qed.

(** Σ_{l≠j} as the sum of the first j (added from the left) and of those after j. *)
Lemma sum_but_pre_suf : forall l j, (j < length l)%nat ->
  sum_but j l = fold_left Rplus (firstn j l) 0 + sumR (skipn (S j) l).
Proof.
  induction l as [|a l IH]; intros j Hj; simpl in Hj; [lia|].
  destruct j as [|j]; [cbn [sum_but firstn skipn fold_left]; ring|].
  change (skipn (S (S j)) (a :: l)) with (skipn (S j) l).
  cbn [sum_but firstn fold_left]. rewrite IH by lia. rewrite !fold_left_plus. ring.
Qed.

(** The softmax with a shift M and each entry as 1 / (1 + R_j / E_j), E_l = e^{s_l − M},
    R_j = Σ_{l≠j} E_l: the kernel's form (softmax.rs), whose interval evaluation is the
    monotone enclosure E_j⁻ / (E_j⁻ + R_j⁺) ≤ p_j ≤ E_j⁺ / (E_j⁺ + R_j⁻). *)
Definition shifted (M : R) (s : list R) : list R := map (fun x => exp (x - M)) s.

Lemma nth_softmax_shift : forall M s j, (j < length s)%nat ->
  nth j (softmaxR s) 0 = / (1 + sum_but j (shifted M s) / nth j (shifted M s) 0).
Proof.
  intros M s j Hj. rewrite nth_softmaxR by exact Hj.
  assert (Hlen : length (shifted M s) = length s) by apply map_length.
  assert (HE : nth j (shifted M s) 0 = exp (nth j s 0 - M)).
  { unfold shifted. rewrite (nth_map_R _ _ _ 0) by exact Hj. reflexivity. }
  assert (Hsum : sumR (map exp s) = exp M * sumR (shifted M s)).
  { unfold shifted. clear. induction s as [|a s IH]; simpl; [ring|]. rewrite IH.
    replace (exp a) with (exp M * exp (a - M)) by (rewrite <- exp_plus; f_equal; ring). ring. }
  rewrite (sum_but_split (shifted M s) j) in Hsum by lia.
  rewrite Hsum, HE.
  assert (HR : 0 <= sum_but j (shifted M s)).
  { apply sum_but_nonneg. intros x Hx. unfold shifted in Hx. apply in_map_iff in Hx.
    destruct Hx as [y [<- _]]. left. apply exp_pos. }
  rewrite HE in *.
  pose proof (exp_pos M). pose proof (exp_pos (nth j s 0 - M)).
  replace (exp (nth j s 0)) with (exp M * exp (nth j s 0 - M)) by (rewrite <- exp_plus; f_equal; ring).
  field. repeat split; apply Rgt_not_eq; lra.
Qed.

(** Σ_j p_j x_j, component by component. *)
Definition all_len (d : nat) (X : list (list R)) : Prop := forall x, In x X -> length x = d.

Lemma wsumR_spec : forall d p X, p <> [] -> length p = length X -> all_len d X ->
  length (wsumR p X) = d /\
  forall c, (c < d)%nat -> nth c (wsumR p X) 0 = sumn (length p) (fun l => nth l p 0 * nth c (nth l X []) 0).
Proof.
  intros d. induction p as [|a p IH]; intros X Hp Hlen Hall; [congruence|].
  destruct X as [|x X]; [discriminate|]. simpl in Hlen.
  assert (Hx : length x = d) by (apply Hall; left; reflexivity).
  assert (HX : all_len d X) by (intros y Hy; apply Hall; right; exact Hy).
  destruct p as [|a' p].
  - destruct X as [|x' X]; [|discriminate]. simpl. split.
    + rewrite vscaleR_length. exact Hx.
    + intros c Hc. rewrite nth_vscaleR. ring.
  - destruct X as [|x' X]; [discriminate|].
    change (wsumR (a :: a' :: p) (x :: x' :: X)) with (vaddR (vscaleR a x) (wsumR (a' :: p) (x' :: X))).
    destruct (IH (x' :: X) ltac:(discriminate) ltac:(simpl in *; lia) HX) as [Hl Hc].
    split.
    + rewrite vaddR_length, vscaleR_length, Hl, Hx. apply Nat.min_id.
    + intros c Hcd. rewrite nth_vaddR by (rewrite ?vscaleR_length; lia).
      rewrite nth_vscaleR, Hc by exact Hcd. reflexivity.
Qed.

(** Σ_{l ≠ i} p_l (x_l − x_i), added in order onto acc (the kernel's residual step,
    layer_map.rs: the widths of the p_l multiply differences, not positions). *)
Fixpoint wdiffR (i j : nat) (p : list R) (X : list (list R)) (xi acc : list R) : list R :=
  match p, X with
  | a :: p', xj :: X' =>
      wdiffR i (S j) p' X' xi (if Nat.eqb i j then acc else vaddR acc (vscaleR a (vsubR xj xi)))
  | _, _ => acc end.

Lemma wdiffR_spec : forall d i p X j xi acc, length p = length X -> all_len d X -> length xi = d ->
  length acc = d ->
  length (wdiffR i j p X xi acc) = d /\
  forall c, (c < d)%nat -> nth c (wdiffR i j p X xi acc) 0 = nth c acc 0 +
    sumn (length p) (fun l => if Nat.eqb i (j + l) then 0 else nth l p 0 * (nth c (nth l X []) 0 - nth c xi 0)).
Proof.
  intros d i. induction p as [|a p IH]; intros X j xi acc Hlen Hall Hxi Hacc.
  - simpl. split; [exact Hacc | intros c _; ring].
  - destruct X as [|x X]; [discriminate|]. simpl in Hlen.
    assert (Hx : length x = d) by (apply Hall; left; reflexivity).
    assert (HX : all_len d X) by (intros y Hy; apply Hall; right; exact Hy).
    set (acc' := if Nat.eqb i j then acc else vaddR acc (vscaleR a (vsubR x xi))).
    assert (Hacc' : length acc' = d).
    { unfold acc'. destruct (Nat.eqb i j); [exact Hacc|].
      rewrite vaddR_length, vscaleR_length, vsubR_length, Hacc, Hx, Hxi, !Nat.min_id. reflexivity. }
    destruct (IH X (S j) xi acc' ltac:(lia) HX Hxi Hacc') as [Hl Hc].
    simpl. split; [exact Hl|]. intros c Hcd. rewrite Hc by exact Hcd.
    replace (j + 0)%nat with j by lia.
    rewrite (sumn_ext _ (fun l => if Nat.eqb i (S j + l) then 0 else nth l p 0 * (nth c (nth l X []) 0 - nth c xi 0))
      (fun l => if Nat.eqb i (j + S l) then 0 else nth l p 0 * (nth c (nth l X []) 0 - nth c xi 0)))
      by (intros l _; replace (S j + l)%nat with (j + S l)%nat by lia; reflexivity).
    unfold acc'. destruct (Nat.eqb i j); [ring|].
    rewrite nth_vaddR by (rewrite ?vscaleR_length, ?vsubR_length; lia).
    rewrite nth_vscaleR, nth_vsubR by lia. ring.
Qed.

Lemma sumn_zero_at : forall n i f, (i < n)%nat -> f i = 0 ->
  sumn n (fun l => if Nat.eqb i l then 0 else f l) = sumn n f.
Proof.
  induction n as [|n IH]; intros i f Hi Hf; [lia|]. simpl.
  destruct i as [|i].
  - simpl. rewrite Hf. f_equal.
  - simpl. f_equal. apply (IH i (fun j => f (S j))); [lia | exact Hf].
Qed.

(** Σ_j p_j x_j = x_i + Σ_{l≠i} p_l (x_l − x_i) when Σ_j p_j = 1. *)
Theorem wsum_centred : forall d i p X, p <> [] -> length p = length X -> all_len d X ->
  (i < length X)%nat -> sumR p = 1 ->
  wsumR p X = vaddR (wdiffR i 0 p X (nth i X []) (repeat 0 d)) (nth i X []).
Proof.
  intros d i p X Hp Hlen Hall Hi Hsum.
  assert (Hxi : length (nth i X []) = d) by (apply Hall, nth_In, Hi).
  destruct (wsumR_spec d p X Hp Hlen Hall) as [Hl1 Hc1].
  destruct (wdiffR_spec d i p X 0 (nth i X []) (repeat 0 d) Hlen Hall Hxi (repeat_length 0 d)) as [Hl2 Hc2].
  apply (nth_ext _ _ 0 0).
  - rewrite vaddR_length, Hl1, Hl2, Hxi. symmetry. apply Nat.min_id.
  - intros c Hc. rewrite Hl1 in Hc. rewrite nth_vaddR by lia. rewrite Hc1, Hc2 by exact Hc.
    rewrite nth_repeat. simpl plus.
    rewrite (sumn_zero_at (length p) i (fun l => nth l p 0 * (nth c (nth l X []) 0 - nth c (nth i X []) 0)))
      by (lia || ring).
    replace (sumn (length p) (fun l => nth l p 0 * (nth c (nth l X []) 0 - nth c (nth i X []) 0)))
      with (sumn (length p) (fun l => nth l p 0 * nth c (nth l X []) 0) + (- nth c (nth i X []) 0) * sumn (length p) (fun l => nth l p 0)).
    2: { rewrite <- sumn_scal, <- sumn_plus. apply sumn_ext. intros l _. ring. }
    rewrite <- sumR_sumn, Hsum. ring.
Qed.

(** ** The map over the reals: the shape it keeps *)
Lemma layer_stepR_len : forall Q K V dt X d, all_len d X -> length V = d ->
  all_len d (layer_stepR Q K V dt X) /\ length (layer_stepR Q K V dt X) = length X.
Proof.
  intros Q K V dt X d HX HV. unfold layer_stepR. split; [|apply map_length].
  intros y Hy. apply in_map_iff in Hy. destruct Hy as [x [<- Hx]].
  rewrite vaddR_length, vscaleR_length, mvR_length, (HX x Hx), HV. apply Nat.min_id.
Qed.

Lemma sumR_softmax : forall s, s <> [] -> sumR (softmaxR s) = 1.
Proof.
  intros s Hs. unfold softmaxR. cbv zeta.
  assert (Hz : 0 < sumR (map exp s)) by (apply sumR_map_pos; [apply exp_pos | exact Hs]).
  set (z := sumR (map exp s)) in *.
  assert (H : forall l, sumR (map (fun sj => exp sj / z) l) = sumR (map exp l) / z).
  { induction l as [|a l IH]; simpl; [field; apply Rgt_not_eq, Hz|]. rewrite IH. field. apply Rgt_not_eq, Hz. }
  rewrite H. unfold z. field. apply Rgt_not_eq, Hz.
Qed.

End LayerReal.


(** ** Reflected formulas over the layer map's quantities *)
Local Open Scope R_scope.

(** Integer index expressions ([layer-…] indices: integer literals and bound
    variables with +, −, ×). *)
Inductive zexp := ZC (z : Z) | ZV (n : nat) | ZAdd (a b : zexp) | ZSub (a b : zexp) | ZMul (a b : zexp)
  | ZOpp (a : zexp).
Fixpoint zden (env : list Z) (e : zexp) : Z :=
  match e with
  | ZC z => z
  | ZV n => nth n env 0%Z
  | ZAdd a b => (zden env a + zden env b)%Z
  | ZSub a b => (zden env a - zden env b)%Z
  | ZMul a b => (zden env a * zden env b)%Z
  | ZOpp a => (- zden env a)%Z
  end.

(** The layer quantities, of datum d (an index into the certificate's list of data). *)
Inductive atom :=
| ASq (d : nat) (r k : zexp)             (* layer-max-sqnorm *)
| ADist (d : nat) (r s k : zexp)         (* layer-max-sqdist *)
| APart (d : nat) (r k : zexp)           (* layer-partition *)
| ACoord (d : nat) (r k i c : zexp).     (* layer-coord *)

Definition zn (env : list Z) (e : zexp) : nat := Z.to_nat (zden env e).
Definition dflt : layerQ := LayerQ [] [] [] 0 0 [].

Definition aden (Ls : list layerQ) (env : list Z) (a : atom) : R :=
  match a with
  | ASq d r k => layer_max_sqnorm (layer_of_Q (nth d Ls dflt)) (Z.to_nat (zden env r)) (Z.to_nat (zden env k))
  | ADist d r s k => layer_max_sqdist (layer_of_Q (nth d Ls dflt)) (Z.to_nat (zden env r)) (Z.to_nat (zden env s))
                       (Z.to_nat (zden env k))
  | APart d r k => layer_partition (layer_of_Q (nth d Ls dflt)) (Z.to_nat (zden env r)) (Z.to_nat (zden env k))
  | ACoord d r k i c => layer_coord (layer_of_Q (nth d Ls dflt)) (Z.to_nat (zden env r)) (Z.to_nat (zden env k))
                          (Z.to_nat (zden env i)) (Z.to_nat (zden env c))
  end.

Inductive xterm :=
| XInt (z : Z) | XFrac (p : Z) (q : positive) | XVar (n : nat) | XQ (q : Q) | XZ (z : Z) | XPi
| XAdd (a b : xterm) | XSub (a b : xterm) | XMul (a b : xterm) | XDiv (a b : xterm)
| XNeg (a : xterm) | XAbs (a : xterm) | XMin (a b : xterm) | XMax (a b : xterm) | XPow (a : xterm) (n : Z)
| XExp (a : xterm) | XLn (a : xterm) | XSqrt (a : xterm) | XSin (a : xterm) | XCos (a : xterm)
| XSum (lo hi : Z) (b : xterm)
| XAtom (a : atom).

(** Its meaning, written as generated statements write it. *)
Fixpoint xden (Ls : list layerQ) (env : list Z) (t : xterm) : R :=
  match t with
  | XInt z => IZR z
  | XFrac p q => IZR p / IZR (Zpos q)
  | XVar n => IZR (nth n env 0%Z)
  | XQ q => Q2R q
  | XZ z => IZR z
  | XPi => PI
  | XAdd a b => xden Ls env a + xden Ls env b
  | XSub a b => xden Ls env a - xden Ls env b
  | XMul a b => xden Ls env a * xden Ls env b
  | XDiv a b => xden Ls env a / xden Ls env b
  | XNeg a => - xden Ls env a
  | XAbs a => Rabs (xden Ls env a)
  | XMin a b => Rmin (xden Ls env a) (xden Ls env b)
  | XMax a b => Rmax (xden Ls env a) (xden Ls env b)
  | XPow a n => match n with
                | Zneg p => / xden Ls env a ^ Pos.to_nat p
                | _ => xden Ls env a ^ Z.to_nat n
                end
  | XExp a => exp (xden Ls env a)
  | XLn a => ln (xden Ls env a)
  | XSqrt a => sqrt (xden Ls env a)
  | XSin a => sin (xden Ls env a)
  | XCos a => cos (xden Ls env a)
  | XSum lo hi b => sumZ lo hi (fun k => xden Ls (k :: env) b)
  | XAtom a => aden Ls env a
  end.

(** The same over the extended reals: Xnan where a partial operation leaves its domain. *)
Fixpoint xdenX (Ls : list layerQ) (env : list Z) (t : xterm) : ExtendedR :=
  match t with
  | XInt z => Xreal (IZR z)
  | XFrac p q => Xdiv (Xreal (IZR p)) (Xreal (IZR (Zpos q)))
  | XVar n => Xreal (IZR (nth n env 0%Z))
  | XQ q => Xreal (Q2R q)
  | XZ z => Xreal (IZR z)
  | XPi => Xreal PI
  | XAdd a b => Xadd (xdenX Ls env a) (xdenX Ls env b)
  | XSub a b => Xsub (xdenX Ls env a) (xdenX Ls env b)
  | XMul a b => Xmul (xdenX Ls env a) (xdenX Ls env b)
  | XDiv a b => Xdiv (xdenX Ls env a) (xdenX Ls env b)
  | XNeg a => Xneg (xdenX Ls env a)
  | XAbs a => Xabs (xdenX Ls env a)
  | XMin a b => Xlift2 Rmin (xdenX Ls env a) (xdenX Ls env b)
  | XMax a b => Xlift2 Rmax (xdenX Ls env a) (xdenX Ls env b)
  | XPow a n => Xpower_int (xdenX Ls env a) n
  | XExp a => Xexp (xdenX Ls env a)
  | XLn a => Xln (xdenX Ls env a)
  | XSqrt a => Xsqrt (xdenX Ls env a)
  | XSin a => Xsin (xdenX Ls env a)
  | XCos a => Xcos (xdenX Ls env a)
  | XSum lo hi b => fold_right (fun k acc => Xadd (xdenX Ls (k :: env) b) acc) (Xreal 0) (rangeZ lo hi)
  | XAtom a => Xreal (aden Ls env a)
  end.

Ltac xgrab H :=
  repeat match type of H with
  | context [xdenX ?Ls ?e ?u] => let E := fresh "E" in destruct (xdenX Ls e u) eqn:E; [discriminate|]
  end.

Lemma xdenX_real : forall Ls t env x, xdenX Ls env t = Xreal x -> xden Ls env t = x.
Proof.
  intros Ls. induction t; intros env x H; cbn [xdenX xden] in H |- *.
  - injection H as <-. reflexivity.
  - cbn [Xbind2] in H. unfold Xdiv' in H. destruct (is_zero (IZR (Z.pos q))); [discriminate|].
    injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. cbn [Xbind2] in H. unfold Xdiv' in H. destruct (is_zero r0); [discriminate|].
    injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt1, IHt2 by eassumption. reflexivity.
  - xgrab H. erewrite IHt by eassumption. cbn [Xpower_int Xbind] in H. unfold Xpower_int' in H.
    destruct n as [|p|p].
    + injection H as <-. reflexivity.
    + injection H as <-. reflexivity.
    + destruct (is_zero r); [discriminate|]. injection H as <-. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. cbn [Xbind] in H. unfold Xln' in H. destruct (is_positive r); [|discriminate].
    injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. cbn [Xbind] in H. unfold Xsqrt' in H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - xgrab H. injection H as <-. erewrite IHt by eassumption. reflexivity.
  - unfold sumZ. revert x H. induction (rangeZ lo hi) as [|k l IHl]; intros x H; cbn [fold_right] in H |- *.
    + injection H as <-. reflexivity.
    + destruct (xdenX Ls (k :: env) t) eqn:E1; [discriminate|].
      destruct (fold_right _ _ l) eqn:E2; [discriminate|]. injection H as <-.
      erewrite IHt by eassumption. rewrite (IHl r0 eq_refl). reflexivity.
  - injection H as <-. reflexivity.
Qed.

(** Integer arithmetic on indices, exactly: an index term such as [i + 1] (a bound
    variable plus a literal) is an integer, evaluated in Z so that the interval
    evaluation below gives it as a point (primitive floats bump every sum by an ulp,
    which leaves a domain condition [i + 1 <= n - 1] undecided at its edge). *)
Fixpoint zlit (env : list Z) (t : xterm) : option Z :=
  match t with
  | XInt z | XZ z => Some z
  | XVar n => Some (nth n env 0%Z)
  | XAdd a b => match zlit env a, zlit env b with Some x, Some y => Some (x + y)%Z | _, _ => None end
  | XSub a b => match zlit env a, zlit env b with Some x, Some y => Some (x - y)%Z | _, _ => None end
  | XNeg a => match zlit env a with Some x => Some (- x)%Z | None => None end
  | _ => None
  end.

Lemma zlit_X : forall Ls t env v, zlit env t = Some v -> xdenX Ls env t = Xreal (IZR v).
Proof.
  intros Ls t. induction t as [z| | n | | z | | t1 IH1 t2 IH2 | t1 IH1 t2 IH2 | | | t IH | | | | | | | | | | | ];
    intros env v H; cbn [zlit] in H; try discriminate; cbn [xdenX].
  - injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - injection H as <-. reflexivity.
  - destruct (zlit env t1) as [x|] eqn:E1; [|discriminate]. destruct (zlit env t2) as [y|] eqn:E2; [|discriminate].
    injection H as <-. rewrite (IH1 env x E1), (IH2 env y E2). simpl. rewrite plus_IZR. reflexivity.
  - destruct (zlit env t1) as [x|] eqn:E1; [|discriminate]. destruct (zlit env t2) as [y|] eqn:E2; [|discriminate].
    injection H as <-. rewrite (IH1 env x E1), (IH2 env y E2). simpl. rewrite minus_IZR. reflexivity.
  - destruct (zlit env t) as [x|] eqn:E; [|discriminate].
    injection H as <-. rewrite (IH env x E). simpl. rewrite opp_IZR. reflexivity.
Qed.

Inductive xform :=
| XTrue
| XLe (a b : xterm) | XLt (a b : xterm) | XGe (a b : xterm) | XGt (a b : xterm) | XNe (a b : xterm)
| XAnd (f g : xform) | XOr (f g : xform)
| XAll (lo hi : Z) (f : xform)
| XEx (lo hi : Z) (f : xform).

Fixpoint xfden (Ls : list layerQ) (env : list Z) (f : xform) : Prop :=
  match f with
  | XTrue => True
  | XLe a b => xden Ls env a <= xden Ls env b
  | XLt a b => xden Ls env a < xden Ls env b
  | XGe a b => xden Ls env a >= xden Ls env b
  | XGt a b => xden Ls env a > xden Ls env b
  | XNe a b => xden Ls env a <> xden Ls env b
  | XAnd f g => xfden Ls env f /\ xfden Ls env g
  | XOr f g => xfden Ls env f \/ xfden Ls env g
  | XAll lo hi f => forall k : Z, (lo <= k <= hi)%Z -> xfden Ls (k :: env) f
  | XEx lo hi f => exists k : Z, (lo <= k <= hi)%Z /\ xfden Ls (k :: env) f
  end.

Module LayerEval (F : FloatOps with Definition sensible_format := true).
Module I := FloatIntervalFull F.
Local Open Scope R_scope.

Definition cont (xi : I.type) (x : R) : Prop := contains (I.convert xi) (Xreal x).

Fixpoint contv (u : list I.type) (x : list R) : Prop :=
  match u, x with
  | [], [] => True
  | a :: u', b :: x' => cont a b /\ contv u' x'
  | _, _ => False end.

Fixpoint contm (U : list (list I.type)) (X : list (list R)) : Prop :=
  match U, X with
  | [], [] => True
  | a :: U', b :: X' => contv a b /\ contm U' X'
  | _, _ => False end.

Lemma contv_length : forall u x, contv u x -> length u = length x.
Proof. induction u as [|a u IH]; intros [|b x] H; simpl in *; try contradiction; auto. f_equal. apply IH, H. Qed.
Lemma contm_length : forall u x, contm u x -> length u = length x.
Proof. induction u as [|a u IH]; intros [|b x] H; simpl in *; try contradiction; auto. f_equal. apply IH, H. Qed.

Lemma contv_nth : forall u x j, contv u x -> (j < length u)%nat -> cont (nth j u I.zero) (nth j x 0).
Proof.
  induction u as [|a u IH]; intros [|b x] j H Hj; simpl in *; try contradiction; try lia.
  destruct j; [apply H | apply IH; [apply H | lia]].
Qed.
Lemma contm_nth : forall u x j, contm u x -> contv (nth j u []) (nth j x []).
Proof.
  induction u as [|a u IH]; intros [|b x] j H; simpl in *; try contradiction.
  - destruct j; exact I.
  - destruct j; [apply H | apply IH, H].
Qed.
Lemma contv_of_nth : forall u x, length u = length x ->
  (forall j, (j < length u)%nat -> cont (nth j u I.zero) (nth j x 0)) -> contv u x.
Proof.
  induction u as [|a u IH]; intros [|b x] Hl H; simpl in *; try discriminate; [exact I|].
  split; [apply (H O); lia | apply IH; [lia | intros j Hj; apply (H (S j)); lia]].
Qed.

Lemma contm_in : forall u x y, contm u x -> In y x -> exists v, In v u /\ contv v y.
Proof.
  induction u as [|a u IH]; intros [|b x] y H Hy; simpl in *; try contradiction.
  destruct H as [Ha Hu]. destruct Hy as [<-|Hy].
  - exists a. split; [left; reflexivity | exact Ha].
  - destruct (IH x y Hu Hy) as [v [Hv Hc]]. exists v. split; [right; exact Hv | exact Hc].
Qed.

Lemma nth_map_seq0 : forall {A} (f : nat -> A) n j (d : A), (j < n)%nat -> nth j (map f (seq 0 n)) d = f j.
Proof.
  intros A f n j d Hj. rewrite (nth_indep _ d (f O)) by (rewrite map_length, seq_length; exact Hj).
  rewrite map_nth, seq_nth by exact Hj. reflexivity.
Qed.

(** ** Interval operations, each enclosing its real operation *)
Section Prec.
Variable prec : I.precision.

Lemma add_c : forall a b x y, cont a x -> cont b y -> cont (I.add prec a b) (x + y).
Proof. intros a b x y Ha Hb. exact (I.add_correct prec a b (Xreal x) (Xreal y) Ha Hb). Qed.
Lemma sub_c : forall a b x y, cont a x -> cont b y -> cont (I.sub prec a b) (x - y).
Proof. intros a b x y Ha Hb. exact (I.sub_correct prec a b (Xreal x) (Xreal y) Ha Hb). Qed.
Lemma mul_c : forall a b x y, cont a x -> cont b y -> cont (I.mul prec a b) (x * y).
Proof. intros a b x y Ha Hb. exact (I.mul_correct prec a b (Xreal x) (Xreal y) Ha Hb). Qed.
Lemma exp_c : forall a x, cont a x -> cont (I.exp prec a) (exp x).
Proof. intros a x Ha. exact (I.exp_correct prec a (Xreal x) Ha). Qed.
Lemma div_c : forall a b x y, y <> 0 -> cont a x -> cont b y -> cont (I.div prec a b) (x / y).
Proof.
  intros a b x y Hy Ha Hb. pose proof (I.div_correct prec a b (Xreal x) (Xreal y) Ha Hb) as H.
  cbn [Xbind2] in H. unfold Xdiv' in H. rewrite (is_zero_false y Hy) in H. exact H.
Qed.
Lemma inv_c : forall a x, x <> 0 -> cont a x -> cont (I.inv prec a) (/ x).
Proof.
  intros a x Hx Ha. pose proof (I.inv_correct prec a (Xreal x) Ha) as H.
  cbn [Xbind] in H. unfold Xinv' in H. rewrite (is_zero_false x Hx) in H. exact H.
Qed.
Lemma zero_c : cont I.zero 0.
Proof. unfold cont. rewrite I.zero_correct. simpl. lra. Qed.
Lemma fromZ_c : forall z, cont (I.fromZ prec z) (IZR z).
Proof. intros z. apply I.fromZ_correct. Qed.

Definition qI (q : Q) : I.type := I.div prec (I.fromZ prec (Qnum q)) (I.fromZ prec (Zpos (Qden q))).
Lemma qI_c : forall q, cont (qI q) (Q2R q).
Proof.
  intros q. unfold qI, Q2R. apply div_c; [| apply fromZ_c | apply fromZ_c].
  apply not_0_IZR. discriminate.
Qed.
Definition matI (M : list (list Q)) : list (list I.type) := map (map qI) M.
Lemma matI_c : forall M, contm (matI M) (matR M).
Proof.
  induction M as [|r M IH]; simpl; [exact I|]. split; [|exact IH].
  induction r as [|a r IHr]; simpl; [exact I|]. split; [apply qI_c | exact IHr].
Qed.

Fixpoint dotI (u v : list I.type) : I.type :=
  match u, v with a :: u', b :: v' => I.add prec (I.mul prec a b) (dotI u' v') | _, _ => I.zero end.
Lemma dotI_c : forall u x v y, contv u x -> contv v y -> cont (dotI u v) (dotR x y).
Proof.
  induction u as [|a u IH]; intros x v y Hu Hv.
  - destruct x; [|contradiction]. apply zero_c.
  - destruct x as [|b x]; [contradiction|]. destruct Hu as [Ha Hu].
    destruct v as [|c v]; destruct y as [|e y]; try contradiction.
    + apply zero_c.
    + destruct Hv as [Hc Hv]. simpl. apply add_c; [apply mul_c; assumption | apply IH; assumption].
Qed.

Definition mvI (A : list (list I.type)) (u : list I.type) : list I.type := map (fun row => dotI row u) A.
Lemma mvI_c : forall A M u x, contm A M -> contv u x -> contv (mvI A u) (mvR M x).
Proof.
  induction A as [|r A IH]; intros M u x HA Hu; destruct M as [|m M]; try contradiction; simpl; [exact I|].
  destruct HA as [Hr HA]. split; [apply (dotI_c r m u x); assumption | apply IH; assumption].
Qed.

Fixpoint vaddI (u v : list I.type) : list I.type :=
  match u, v with a :: u', b :: v' => I.add prec a b :: vaddI u' v' | _, _ => [] end.
Lemma vaddI_c : forall u x v y, contv u x -> contv v y -> contv (vaddI u v) (vaddR x y).
Proof.
  induction u as [|a u IH]; intros x v y Hu Hv; destruct x as [|b x]; try contradiction; [exact I|].
  destruct Hu as [Ha Hu]. destruct v as [|c v]; destruct y as [|e y]; try contradiction; [exact I|].
  destruct Hv as [Hc Hv]. simpl. split; [apply add_c; assumption | apply IH; assumption].
Qed.

Fixpoint vsubI (u v : list I.type) : list I.type :=
  match u, v with a :: u', b :: v' => I.sub prec a b :: vsubI u' v' | _, _ => [] end.
Lemma vsubI_c : forall u x v y, contv u x -> contv v y -> contv (vsubI u v) (vsubR x y).
Proof.
  induction u as [|a u IH]; intros x v y Hu Hv; destruct x as [|b x]; try contradiction; [exact I|].
  destruct Hu as [Ha Hu]. destruct v as [|c v]; destruct y as [|e y]; try contradiction; [exact I|].
  destruct Hv as [Hc Hv]. simpl. split; [apply sub_c; assumption | apply IH; assumption].
Qed.

Definition vscaleI (c : I.type) (u : list I.type) : list I.type := map (fun a => I.mul prec c a) u.
Lemma vscaleI_c : forall c r u x, cont c r -> contv u x -> contv (vscaleI c u) (vscaleR r x).
Proof.
  intros c r. induction u as [|a u IH]; intros x Hc Hu; destruct x as [|b x]; try contradiction; [exact I|].
  destruct Hu as [Ha Hu]. simpl. split; [apply mul_c; assumption | apply IH; assumption].
Qed.

Fixpoint sumI (l : list I.type) : I.type :=
  match l with [] => I.zero | a :: l' => I.add prec a (sumI l') end.
Lemma sumI_c : forall l x, contv l x -> cont (sumI l) (sumR x).
Proof.
  induction l as [|a l IH]; intros x H; destruct x as [|b x]; try contradiction; [apply zero_c|].
  destruct H as [Ha H]. simpl. apply add_c; [exact Ha | apply IH, H].
Qed.

Fixpoint sum_butI (j : nat) (l : list I.type) {struct l} : I.type :=
  match l with
  | [] => I.zero
  | a :: l' => match j with O => sumI l' | S j' => I.add prec a (sum_butI j' l') end end.
Lemma sum_butI_c : forall l x j, contv l x -> cont (sum_butI j l) (sum_but j x).
Proof.
  induction l as [|a l IH]; intros x j H; destruct x as [|b x]; try contradiction; [apply zero_c|].
  destruct H as [Ha H]. destruct j as [|j]; simpl; [apply sumI_c, H | apply add_c; [exact Ha | apply IH, H]].
Qed.

Definition logitI (Q K : list (list I.type)) (xi xj : list I.type) : I.type := dotI (mvI Q xi) (mvI K xj).
Lemma map_logit_c : forall Q K Qr Kr xi yi, contm Q Qr -> contm K Kr -> contv xi yi ->
  forall x X, contm x X -> contv (map (logitI Q K xi) x) (map (logitR Qr Kr yi) X).
Proof.
  intros Q K Qr Kr xi yi HQ HK Hi. induction x as [|u x IH]; intros X Hx; destruct X as [|v X]; try contradiction;
    [exact I|]. destruct Hx as [Hu Hx]. split; [apply dotI_c; apply mvI_c; assumption | apply IH, Hx].
Qed.

(** The shift of the softmax: a thin interval at a float u (any u: the identity
    [nth_softmax_shift] holds for every real shift). *)
Definition ptI (u : F.type) : I.type := if F.real u then Float.Ibnd u u else I.zero.
Definition ptR (u : F.type) : R := if F.real u then F.toR u else 0.
Lemma ptI_c : forall u, cont (ptI u) (ptR u).
Proof.
  intros u. unfold ptI, ptR, cont. destruct (F.real u) eqn:E; [|apply zero_c].
  pose proof (F.real_correct u) as H. rewrite E in H.
  pose proof (F.classify_correct u) as C. rewrite E in C.
  destruct (F.toX u) as [|x] eqn:Hx; [discriminate|].
  unfold I.convert. rewrite (F.valid_lb_correct u), (F.valid_ub_correct u).
  destruct (F.classify u); try discriminate. simpl. rewrite Hx.
  unfold F.toR. rewrite Hx. simpl. lra.
Qed.

(** The largest upper end of a list of intervals (a float; the shift). *)
Definition upper_of (x : I.type) : F.type := match x with Float.Ibnd _ u => u | Float.Inan => F.zero end.
Definition shiftI (s : list I.type) : I.type :=
  ptI (fold_right (fun x m => F.max (upper_of x) m) (upper_of (hd I.zero s)) s).

(** The sums of the last l − j entries (j = 0, …, l), from the right, and of the first j,
    from the left: R_j = Σ_{l≠j} E_l from both in O(1) each ([sum_but_pre_suf]). *)
Fixpoint suffixesI (l : list I.type) : list I.type :=
  match l with [] => [I.zero] | a :: l' => let s := suffixesI l' in I.add prec a (hd I.zero s) :: s end.
Fixpoint prefixesI (acc : I.type) (l : list I.type) : list I.type :=
  acc :: match l with [] => [] | a :: l' => prefixesI (I.add prec acc a) l' end.

Lemma suffixesI_nth : forall l j, (j <= length l)%nat -> nth j (suffixesI l) I.zero = sumI (skipn j l).
Proof.
  assert (Hd : forall l, hd I.zero (suffixesI l) = sumI l).
  { induction l as [|a l IH]; simpl; [reflexivity|]. rewrite IH. reflexivity. }
  induction l as [|a l IH]; intros j Hj.
  - simpl in Hj. replace j with O by lia. reflexivity.
  - destruct j as [|j]; simpl; [rewrite Hd; reflexivity | apply IH; simpl in Hj; lia].
Qed.

Lemma prefixesI_nth : forall l acc j, (j <= length l)%nat ->
  nth j (prefixesI acc l) I.zero = fold_left (fun s a => I.add prec s a) (firstn j l) acc.
Proof.
  induction l as [|a l IH]; intros acc j Hj.
  - simpl in Hj. replace j with O by lia. reflexivity.
  - destruct j as [|j]; simpl; [reflexivity | apply IH; simpl in Hj; lia].
Qed.

Lemma fold_add_c : forall l x acc r, contv l x -> cont acc r ->
  cont (fold_left (fun s a => I.add prec s a) l acc) (fold_left Rplus x r).
Proof.
  induction l as [|a l IH]; intros [|b x] acc r H Hr; try contradiction; [exact Hr|].
  destruct H as [Ha H]. simpl. apply IH; [exact H | apply add_c; assumption].
Qed.

Lemma contv_firstn : forall l x j, contv l x -> contv (firstn j l) (firstn j x).
Proof.
  induction l as [|a l IH]; intros [|b x] j H; try contradiction; destruct j; simpl; try exact I.
  destruct H as [Ha H]. split; [exact Ha | apply IH, H].
Qed.
Lemma contv_skipn : forall l x j, contv l x -> contv (skipn j l) (skipn j x).
Proof.
  induction l as [|a l IH]; intros [|b x] j H; try contradiction; destruct j; simpl; try exact I.
  - split; [apply H | apply H].
  - apply IH, H.
Qed.

(** p_j = 1 / (1 + R_j / E_j): the kernel's softmax (softmax.rs). *)
Definition softI (s : list I.type) : list I.type :=
  let M := shiftI s in
  let E := map (fun x => I.exp prec (I.sub prec x M)) s in
  let pre := prefixesI I.zero E in
  let suf := suffixesI E in
  map (fun j => I.inv prec (I.add prec (I.fromZ prec 1)
                  (I.div prec (I.add prec (nth j pre I.zero) (nth (S j) suf I.zero)) (nth j E I.zero))))
      (seq 0 (length s)).

Lemma map_shift_c : forall M Mr s x, cont M Mr -> contv s x ->
  contv (map (fun x => I.exp prec (I.sub prec x M)) s) (shifted Mr x).
Proof.
  intros M Mr s. unfold shifted. induction s as [|a s IH]; intros [|b x] HM H; try contradiction;
    [exact I|]. destruct H as [Ha H]. split; [apply exp_c, sub_c; assumption | apply IH; assumption].
Qed.

Lemma softI_c : forall s x, contv s x -> contv (softI s) (softmaxR x).
Proof.
  intros s x H. pose proof (contv_length _ _ H) as Hl.
  unfold softI. cbv zeta. set (M := shiftI s).
  set (Mr := ptR (fold_right (fun x m => F.max (upper_of x) m) (upper_of (hd I.zero s)) s)).
  assert (HM : cont M Mr) by apply ptI_c.
  set (E := map (fun x => I.exp prec (I.sub prec x M)) s).
  assert (HE : contv E (shifted Mr x)) by (apply map_shift_c; assumption).
  apply contv_of_nth.
  - rewrite map_length, seq_length, softmaxR_length. exact Hl.
  - intros j Hj. rewrite map_length, seq_length in Hj.
    rewrite nth_map_seq0 by exact Hj.
    rewrite (nth_softmax_shift Mr) by lia.
    assert (HEj : 0 < nth j (shifted Mr x) 0).
    { unfold shifted. rewrite (nth_map_R _ _ _ 0) by lia. apply exp_pos. }
    assert (HR : 0 <= sum_but j (shifted Mr x)).
    { apply sum_but_nonneg. intros y Hy. unfold shifted in Hy. apply in_map_iff in Hy.
      destruct Hy as [z [<- _]]. left. apply exp_pos. }
    apply inv_c.
    + apply Rgt_not_eq. apply Rlt_gt. apply Rplus_lt_le_0_compat; [lra|].
      apply Rmult_le_pos; [exact HR | left; apply Rinv_0_lt_compat; exact HEj].
    + assert (HlE : length E = length s) by (unfold E; apply map_length).
      apply add_c; [apply fromZ_c|]. apply div_c; [apply Rgt_not_eq; exact HEj | |].
      * rewrite prefixesI_nth, suffixesI_nth
          by (unfold E; rewrite map_length; first [exact Hj | apply Nat.lt_le_incl; exact Hj]).
        rewrite (sum_but_pre_suf _ j) by (unfold shifted; rewrite map_length; lia).
        apply add_c; [apply fold_add_c; [apply contv_firstn, HE | exact zero_c] | apply sumI_c, contv_skipn, HE].
      * apply contv_nth; [exact HE | unfold E; rewrite map_length; exact Hj].
Qed.

Fixpoint wdiffI (i j : nat) (p : list I.type) (X : list (list I.type)) (xi acc : list I.type) : list I.type :=
  match p, X with
  | a :: p', xj :: X' =>
      wdiffI i (S j) p' X' xi (if Nat.eqb i j then acc else vaddI acc (vscaleI a (vsubI xj xi)))
  | _, _ => acc end.
Lemma wdiffI_c : forall i p pr X Xr j xi xir acc accr, contv p pr -> contm X Xr -> contv xi xir ->
  contv acc accr -> contv (wdiffI i j p X xi acc) (wdiffR i j pr Xr xir accr).
Proof.
  intros i. induction p as [|a p IH]; intros pr X Xr j xi xir acc accr Hp HX Hxi Hacc;
    destruct pr as [|b pr]; try contradiction; [simpl; exact Hacc|].
  destruct Hp as [Ha Hp]. destruct X as [|u X]; destruct Xr as [|v Xr]; try contradiction; [simpl; exact Hacc|].
  destruct HX as [Hu HX]. simpl. apply IH; try assumption.
  destruct (Nat.eqb i j); [exact Hacc|]. apply vaddI_c; [exact Hacc|].
  apply vscaleI_c; [exact Ha|]. apply vsubI_c; assumption.
Qed.

Lemma repeat_c : forall n, contv (repeat I.zero n) (repeat 0 n).
Proof. induction n as [|n IH]; simpl; [exact I | split; [apply zero_c | exact IH]]. Qed.

(** One step of the map, token by token, in the kernel's form (layer_map.rs). *)
Definition tokenI (V : list (list I.type)) (dt : I.type) (x : list (list I.type)) (s : list I.type) (i : nat) :
  list I.type :=
  let xi := nth i x [] in
  let p := softI s in
  let avg := vaddI (wdiffI i 0 p x xi (repeat I.zero (length xi))) xi in
  vaddI xi (vscaleI dt (mvI V avg)).
(** The logits s_ij = ⟨Q x_i, K x_j⟩ from Q x_i and K x_j, each computed once. *)
Definition layer_stepI (Q K V : list (list I.type)) (dt : I.type) (x : list (list I.type)) : list (list I.type) :=
  let qx := map (mvI Q) x in
  let kx := map (mvI K) x in
  map (fun i => tokenI V dt x (map (dotI (nth i qx [])) kx) i) (seq 0 (length x)).

Lemma map_mvI_c : forall A M x X, contm A M -> contm x X -> contm (map (mvI A) x) (map (mvR M) X).
Proof.
  intros A M. induction x as [|u x IH]; intros [|v X] HA Hx; try contradiction; [exact I|].
  destruct Hx as [Hu Hx]. split; [apply mvI_c; assumption | apply IH; assumption].
Qed.
Lemma map_dot_c : forall q qr k K, contv q qr -> contm k K -> contv (map (dotI q) k) (map (dotR qr) K).
Proof.
  intros q qr. induction k as [|u k IH]; intros [|v K] Hq Hk; try contradiction; [exact I|].
  destruct Hk as [Hu Hk]. split; [apply dotI_c; assumption | apply IH; assumption].
Qed.

Lemma map_seq_nth_l : forall (f : list R -> list R) (X : list (list R)),
  map f X = map (fun i => f (nth i X [])) (seq 0 (length X)).
Proof.
  intros f X. induction X as [|a X IH]; [reflexivity|].
  simpl. rewrite <- seq_shift, map_map. simpl. f_equal. exact IH.
Qed.

Theorem layer_stepI_c : forall Q K V dt x Qr Kr Vr dtr X d, contm Q Qr -> contm K Kr -> contm V Vr ->
  cont dt dtr -> contm x X -> all_len d X -> X <> [] ->
  contm (layer_stepI Q K V dt x) (layer_stepR Qr Kr Vr dtr X).
Proof.
  intros Q K V dt x Qr Kr Vr dtr X d HQ HK HV Hdt Hx Hall Hne.
  pose proof (contm_length _ _ Hx) as Hl.
  unfold layer_stepI, layer_stepR. rewrite map_seq_nth_l, Hl.
  assert (H : forall l, (forall i, In i l -> (i < length X)%nat) ->
    contm (map (fun i => tokenI V dt x (map (dotI (nth i (map (mvI Q) x) [])) (map (mvI K) x)) i) l)
          (map (fun i => vaddR (nth i X []) (vscaleR dtr (mvR Vr (wsumR (softmaxR (map (logitR Qr Kr (nth i X [])) X)) X)))) l)).
  { induction l as [|i l IH]; intros Hin; simpl; [exact I|]. split; [|apply IH; intros; apply Hin; right; assumption].
    assert (Hi : (i < length X)%nat) by (apply Hin; left; reflexivity).
    pose proof (contm_nth x X i Hx) as Hxi.
    unfold tokenI. cbv zeta.
    set (sr := map (logitR Qr Kr (nth i X [])) X).
    assert (Hs : contv (map (dotI (nth i (map (mvI Q) x) [])) (map (mvI K) x)) sr).
    { unfold sr. replace (map (logitR Qr Kr (nth i X [])) X) with (map (dotR (mvR Qr (nth i X []))) (map (mvR Kr) X))
        by (rewrite map_map; reflexivity).
      apply map_dot_c; [|apply map_mvI_c; assumption].
      rewrite (nth_indep _ [] (mvI Q [])) by (rewrite map_length; lia). rewrite map_nth.
      apply mvI_c; assumption. }
    assert (Hp := softI_c _ _ Hs).
    assert (Hsne : sr <> []) by (unfold sr; destruct X; [congruence | discriminate]).
    assert (Hxid : length (nth i X []) = d) by (apply Hall, nth_In, Hi).
    rewrite (wsum_centred d i (softmaxR sr) X); [| intros E; apply (f_equal (@length R)) in E;
      rewrite softmaxR_length in E; destruct sr; [congruence | discriminate]
      | rewrite softmaxR_length; unfold sr; apply map_length | exact Hall | exact Hi
      | apply sumR_softmax, Hsne].
    apply vaddI_c; [exact Hxi|]. apply vscaleI_c; [exact Hdt|]. apply mvI_c; [exact HV|].
    apply vaddI_c; [|exact Hxi]. rewrite (contv_length _ _ Hxi), Hxid.
    apply wdiffI_c; [exact Hp | exact Hx | exact Hxi | apply repeat_c]. }
  apply H. intros i Hi. apply in_seq in Hi. lia.
Qed.


(** ** Extrema of intervals (bounds that are real floats only, else no information) *)
Definition all_real (a b : I.type) : bool :=
  match a, b with
  | Float.Ibnd la ua, Float.Ibnd lb ub => F.real la && F.real ua && F.real lb && F.real ub
  | _, _ => false end.
Definition imax (a b : I.type) : I.type :=
  match a, b with
  | Float.Ibnd la ua, Float.Ibnd lb ub =>
      if all_real a b then Float.Ibnd (F.max la lb) (F.max ua ub) else Float.Inan
  | _, _ => Float.Inan end.
Definition imin (a b : I.type) : I.type :=
  match a, b with
  | Float.Ibnd la ua, Float.Ibnd lb ub =>
      if all_real a b then Float.Ibnd (F.min la lb) (F.min ua ub) else Float.Inan
  | _, _ => Float.Inan end.

Lemma real_toX : forall u, F.real u = true -> exists x, F.toX u = Xreal x /\ F.classify u = Sig.Freal.
Proof.
  intros u H. pose proof (F.real_correct u) as R. pose proof (F.classify_correct u) as C.
  rewrite H in R, C. destruct (F.toX u) as [|x]; [discriminate|]. exists x. split; [reflexivity|].
  destruct (F.classify u); try discriminate; reflexivity.
Qed.

Lemma convert_real : forall l u, F.real l = true -> F.real u = true ->
  exists a b, I.convert (Float.Ibnd l u) = Ibnd (Xreal a) (Xreal b) /\ F.toX l = Xreal a /\ F.toX u = Xreal b.
Proof.
  intros l u Hl Hu. destruct (real_toX l Hl) as [a [Ha Ca]]. destruct (real_toX u Hu) as [b [Hb Cb]].
  exists a, b. unfold I.convert. rewrite (F.valid_lb_correct l), (F.valid_ub_correct u), Ca, Cb. simpl.
  rewrite Ha, Hb. auto.
Qed.

Lemma max_real : forall x y a b, F.toX x = Xreal a -> F.toX y = Xreal b -> F.classify x = Sig.Freal ->
  F.classify y = Sig.Freal -> F.toX (F.max x y) = Xreal (Rmax a b).
Proof.
  intros x y a b Hx Hy Cx Cy. pose proof (F.max_correct x y) as H. rewrite Cx, Cy in H. rewrite H, Hx, Hy.
  reflexivity.
Qed.
Lemma min_real : forall x y a b, F.toX x = Xreal a -> F.toX y = Xreal b -> F.classify x = Sig.Freal ->
  F.classify y = Sig.Freal -> F.toX (F.min x y) = Xreal (Rmin a b).
Proof.
  intros x y a b Hx Hy Cx Cy. pose proof (F.min_correct x y) as H. rewrite Cx, Cy in H. rewrite H, Hx, Hy.
  reflexivity.
Qed.

Lemma toX_real_real : forall x a, F.toX x = Xreal a -> F.real x = true.
Proof. intros x a H. rewrite F.real_correct, H. reflexivity. Qed.

Lemma iext_c : forall (f : F.type -> F.type -> F.type) (g : R -> R -> R),
  (forall x y a b, F.toX x = Xreal a -> F.toX y = Xreal b -> F.classify x = Sig.Freal ->
     F.classify y = Sig.Freal -> F.toX (f x y) = Xreal (g a b)) ->
  (forall a b c d x y, a <= x <= b -> c <= y <= d -> g a c <= g x y <= g b d) ->
  forall (A B : I.type) (x y : ExtendedR), contains (I.convert A) x -> contains (I.convert B) y ->
  contains (I.convert (match A, B with
                       | Float.Ibnd la ua, Float.Ibnd lb ub =>
                           if all_real A B then Float.Ibnd (f la lb) (f ua ub) else Float.Inan
                       | _, _ => Float.Inan end)) (Xlift2 g x y).
Proof.
  intros f g Hf Hg A B x y HA HB.
  destruct A as [|la ua]; [exact I|]. destruct B as [|lb ub]; [exact I|].
  destruct (all_real (Float.Ibnd la ua) (Float.Ibnd lb ub)) eqn:E; [|exact I].
  unfold all_real in E. apply andb_prop in E as [E E4]. apply andb_prop in E as [E E3].
  apply andb_prop in E as [E1 E2].
  destruct (convert_real la ua E1 E2) as [a1 [b1 [HcA [Ha1 Hb1]]]].
  destruct (convert_real lb ub E3 E4) as [a2 [b2 [HcB [Ha2 Hb2]]]].
  rewrite HcA in HA. rewrite HcB in HB.
  destruct x as [|x]; [contradiction|]. destruct y as [|y]; [contradiction|].
  destruct (real_toX la E1) as [_ [_ C1]]. destruct (real_toX ua E2) as [_ [_ C2]].
  destruct (real_toX lb E3) as [_ [_ C3]]. destruct (real_toX ub E4) as [_ [_ C4]].
  pose proof (Hf la lb a1 a2 Ha1 Ha2 C1 C3) as Hl. pose proof (Hf ua ub b1 b2 Hb1 Hb2 C2 C4) as Hu.
  simpl in HA, HB.
  destruct (convert_real (f la lb) (f ua ub) (toX_real_real _ _ Hl) (toX_real_real _ _ Hu)) as [a3 [b3 [Hc [H3 H4]]]].
  rewrite Hc. rewrite Hl in H3. rewrite Hu in H4. injection H3 as <-. injection H4 as <-.
  simpl. apply Hg; assumption.
Qed.

Lemma imax_c : forall A B x y, contains (I.convert A) x -> contains (I.convert B) y ->
  contains (I.convert (imax A B)) (Xlift2 Rmax x y).
Proof.
  apply (iext_c F.max Rmax max_real).
  intros a b c d x y Hx Hy. unfold Rmax.
  destruct (Rle_dec a c), (Rle_dec x y), (Rle_dec b d); lra.
Qed.
Lemma imin_c : forall A B x y, contains (I.convert A) x -> contains (I.convert B) y ->
  contains (I.convert (imin A B)) (Xlift2 Rmin x y).
Proof.
  apply (iext_c F.min Rmin min_real).
  intros a b c d x y Hx Hy. unfold Rmin.
  destruct (Rle_dec a c), (Rle_dec x y), (Rle_dec b d); lra.
Qed.


(** ** The trace of a datum: every state of every run, and the partition sums *)
Definition sqnormI (u : list I.type) : I.type := dotI u u.
Fixpoint maxI (l : list I.type) : I.type :=
  match l with [] => I.zero | [a] => a | a :: l' => imax a (maxI l') end.
Lemma maxI_c : forall l x, contv l x -> cont (maxI l) (maxR x).
Proof.
  induction l as [|a l IH]; intros x H; destruct x as [|b x]; try contradiction; [apply zero_c|].
  destruct H as [Ha H]. destruct l as [|a' l]; destruct x as [|b' x]; try contradiction; [exact Ha|].
  change (cont (imax a (maxI (a' :: l))) (Rmax b (maxR (b' :: x)))).
  apply (imax_c _ _ (Xreal _) (Xreal _)); [exact Ha | apply IH, H].
Qed.
Lemma map_sqnorm_c : forall x X, contm x X -> contv (map sqnormI x) (map sqnormR X).
Proof.
  induction x as [|u x IH]; intros [|v X] H; try contradiction; [exact I|].
  destruct H as [Hu H]. split; [apply dotI_c; assumption | apply IH, H].
Qed.

Definition partI (Q K : list (list I.type)) (x : list (list I.type)) : I.type :=
  sumI (map (fun xi => sumI (map (fun xj => I.exp prec (logitI Q K xi xj)) x)) x).
Lemma partI_c : forall Q K Qr Kr x X, contm Q Qr -> contm K Kr -> contm x X ->
  cont (partI Q K x) (sumR (map (fun xi => sumR (map (fun xj => exp (logitR Qr Kr xi xj)) X)) X)).
Proof.
  intros Q K Qr Kr x X HQ HK Hx. unfold partI. apply sumI_c.
  assert (G : forall y Y, contm y Y ->
    contv (map (fun xi => sumI (map (fun xj => I.exp prec (logitI Q K xi xj)) x)) y)
          (map (fun xi => sumR (map (fun xj => exp (logitR Qr Kr xi xj)) X)) Y)).
  { induction y as [|u y IH]; intros [|v Y] Hy; try contradiction; [exact I|].
    destruct Hy as [Hu Hy]. split; [|apply IH, Hy]. apply sumI_c.
    clear IH Hy. revert X Hx. induction x as [|w x IHx]; intros [|z X] Hx; try contradiction; [exact I|].
    destruct Hx as [Hw Hx]. split; [apply exp_c; apply dotI_c; apply mvI_c; assumption | apply IHx, Hx]. }
  apply G, Hx.
Qed.

(** The states x^0, …, x^n of one run. *)
Fixpoint statesI (step : list (list I.type) -> list (list I.type)) (n : nat) (x : list (list I.type)) :=
  match n with O => [x] | S n' => x :: statesI step n' (step x) end.

Lemma statesI_length : forall step n x, length (statesI step n x) = S n.
Proof. intros step. induction n as [|n IH]; intros x; simpl; [reflexivity | rewrite IH; reflexivity]. Qed.

Lemma iter_S_r : forall {A} (f : A -> A) k x, Nat.iter (S k) f x = Nat.iter k f (f x).
Proof. intros A f. induction k as [|k IH]; intros x; [reflexivity|]. simpl. rewrite <- IH. reflexivity. Qed.

Lemma statesI_nth : forall step n x k, (k <= n)%nat -> nth k (statesI step n x) [] = Nat.iter k step x.
Proof.
  intros step. induction n as [|n IH]; intros x k Hk.
  - replace k with O by lia. reflexivity.
  - destruct k as [|k]; [reflexivity|]. simpl. rewrite IH by lia.
    rewrite <- iter_S_r. reflexivity.
Qed.

(** The exact data's well-formedness the enclosure needs: every run non-empty and
    every token of the length d of V (then every step keeps this shape). *)
Definition wfQ (L : layerQ) : bool :=
  forallb (fun X => negb (Nat.eqb (length X) 0) && forallb (fun x => Nat.eqb (length x) (length (lq_v L))) X)
    (lq_runs L).

Record dtab := DTab { dt_states : list (list (list (list I.type))); dt_parts : list (list I.type) }.

Definition build (L : layerQ) (want_part : bool) : dtab :=
  if wfQ L then
    let Qi := matI (lq_q L) in let Ki := matI (lq_k L) in
    let st := statesI (layer_stepI Qi Ki (matI (lq_v L)) (qI (lq_dt L))) (lq_steps L) in
    let states := map (fun X => st (matI X)) (lq_runs L) in
    DTab states (if want_part then map (map (partI Qi Ki)) states else [])
  else DTab [] [].

Definition tab_ok (L : layer) (t : dtab) : Prop :=
  (forall r k s, nth_error (dt_states t) r = Some s -> forall x, nth_error s k = Some x ->
     contm x (layer_iter L r k)) /\
  (forall r k s, nth_error (dt_parts t) r = Some s -> forall p, nth_error s k = Some p ->
     cont p (layer_partition L r k)).

Lemma iter_c : forall Qi Ki Vi dti Qr Kr Vr dtr d, contm Qi Qr -> contm Ki Kr -> contm Vi Vr -> cont dti dtr ->
  length Vr = d -> forall k x X, contm x X -> all_len d X -> X <> [] ->
  contm (Nat.iter k (layer_stepI Qi Ki Vi dti) x) (Nat.iter k (layer_stepR Qr Kr Vr dtr) X) /\
  all_len d (Nat.iter k (layer_stepR Qr Kr Vr dtr) X) /\ Nat.iter k (layer_stepR Qr Kr Vr dtr) X <> [].
Proof.
  intros Qi Ki Vi dti Qr Kr Vr dtr d HQ HK HV Hdt Hd. induction k as [|k IH]; intros x X Hx HX Hne.
  - simpl. auto.
  - destruct (IH x X Hx HX Hne) as [H1 [H2 H3]]. simpl.
    destruct (layer_stepR_len Qr Kr Vr dtr (Nat.iter k (layer_stepR Qr Kr Vr dtr) X) d H2 Hd) as [L1 L2].
    split; [|split; [exact L1|]].
    + apply (layer_stepI_c _ _ _ _ _ _ _ _ _ _ d); assumption.
    + intros E. rewrite E in L2. destruct (Nat.iter k (layer_stepR Qr Kr Vr dtr) X); [congruence | discriminate].
Qed.

Lemma build_ok : forall L w, tab_ok (layer_of_Q L) (build L w).
Proof.
  intros L w. unfold build. destruct (wfQ L) eqn:Hwf; [|split; intros r k s H; destruct r; discriminate].
  unfold wfQ in Hwf. rewrite forallb_forall in Hwf.
  assert (Hrun : forall r X, nth_error (lq_runs L) r = Some X ->
    forall k, (k <= lq_steps L)%nat -> forall x, nth_error (statesI (layer_stepI (matI (lq_q L)) (matI (lq_k L)) (matI (lq_v L)) (qI (lq_dt L))) (lq_steps L) (matI X)) k = Some x ->
    contm x (layer_iter (layer_of_Q L) r k)).
  { intros r X HX k Hk x Hx.
    apply nth_error_nth with (d := []) in Hx. rewrite statesI_nth in Hx by exact Hk. subst x.
    unfold layer_iter. simpl.
    rewrite (nth_error_nth (map matR (lq_runs L)) r (x := matR X) []) by (rewrite nth_error_map, HX; reflexivity).
    assert (Hw := Hwf X (nth_error_In _ _ HX)). apply andb_prop in Hw as [Hne Hall].
    rewrite forallb_forall in Hall.
    apply (iter_c _ _ _ _ _ _ _ _ (length (lq_v L))).
    - apply matI_c. - apply matI_c. - apply matI_c. - apply qI_c.
    - unfold matR. apply map_length.
    - apply matI_c.
    - intros y Hy. unfold matR in Hy. apply in_map_iff in Hy. destruct Hy as [z [<- Hz]].
      rewrite map_length. apply Nat.eqb_eq, Hall, Hz.
    - unfold matR. intros E. apply (f_equal (@length _)) in E. rewrite map_length in E. simpl in E.
      rewrite E in Hne. discriminate. }
  split.
  - intros r k s Hs x Hx. simpl in Hs. rewrite nth_error_map in Hs.
    destruct (nth_error (lq_runs L) r) as [X|] eqn:HX; [|discriminate]. injection Hs as <-.
    assert (Hk : (k < S (lq_steps L))%nat) by (rewrite <- (statesI_length (layer_stepI (matI (lq_q L)) (matI (lq_k L)) (matI (lq_v L)) (qI (lq_dt L))) (lq_steps L) (matI X)); apply nth_error_Some; congruence).
    apply (Hrun r X HX k ltac:(lia) x Hx).
  - intros r k s Hs p Hp. destruct w; [|destruct r; discriminate].
    simpl in Hs. rewrite nth_error_map, nth_error_map in Hs.
    destruct (nth_error (lq_runs L) r) as [X|] eqn:HX; [|discriminate]. injection Hs as <-.
    rewrite nth_error_map in Hp.
    destruct (nth_error (statesI _ (lq_steps L) (matI X)) k) as [x|] eqn:Hx; [|discriminate].
    injection Hp as <-.
    assert (Hk : (k < S (lq_steps L))%nat) by (rewrite <- (statesI_length (layer_stepI (matI (lq_q L)) (matI (lq_k L)) (matI (lq_v L)) (qI (lq_dt L))) (lq_steps L) (matI X)); apply nth_error_Some; congruence).
    pose proof (Hrun r X HX k ltac:(lia) x Hx) as Hc.
    unfold layer_partition. cbv zeta. apply partI_c; [apply matI_c | apply matI_c | exact Hc].
Qed.


(** ** Evaluation of reflected formulas in interval arithmetic *)
Definition lookup {A} (l : list A) (n : nat) : option A := nth_error l n.

Definition aeval (tabs : list dtab) (env : list Z) (a : atom) : I.type :=
  match a with
  | ASq d r k =>
      match nth_error tabs d with
      | Some t => match nth_error (dt_states t) (zn env r) with
                  | Some s => match nth_error s (zn env k) with
                              | Some x => maxI (map sqnormI x) | None => Float.Inan end
                  | None => Float.Inan end
      | None => Float.Inan end
  | ADist d r s k =>
      match nth_error tabs d with
      | Some t => match nth_error (dt_states t) (zn env r), nth_error (dt_states t) (zn env s) with
                  | Some s1, Some s2 => match nth_error s1 (zn env k), nth_error s2 (zn env k) with
                              | Some x, Some y => maxI (map sqnormI (zipw vsubI x y))
                              | _, _ => Float.Inan end
                  | _, _ => Float.Inan end
      | None => Float.Inan end
  | APart d r k =>
      match nth_error tabs d with
      | Some t => match nth_error (dt_parts t) (zn env r) with
                  | Some s => match nth_error s (zn env k) with Some p => p | None => Float.Inan end
                  | None => Float.Inan end
      | None => Float.Inan end
  | ACoord d r k i c =>
      match nth_error tabs d with
      | Some t => match nth_error (dt_states t) (zn env r) with
                  | Some s => match nth_error s (zn env k) with
                              | Some x => match nth_error x (zn env i) with
                                          | Some u => match nth_error u (zn env c) with
                                                      | Some v => v | None => Float.Inan end
                                          | None => Float.Inan end
                              | None => Float.Inan end
                  | None => Float.Inan end
      | None => Float.Inan end
  end.

Lemma zipw_vsub_c : forall x X y Y, contm x X -> contm y Y ->
  contm (zipw vsubI x y) (zipw vsubR X Y).
Proof.
  induction x as [|u x IH]; intros [|v X] y Y Hx Hy; try contradiction; [exact I|].
  destruct Hx as [Hu Hx]. destruct y as [|w y]; destruct Y as [|z Y]; try contradiction; [exact I|].
  destruct Hy as [Hw Hy]. split; [apply vsubI_c; assumption | apply IH; assumption].
Qed.

Lemma contv_nth_error : forall u x j a, contv u x -> nth_error u j = Some a -> cont a (nth j x 0).
Proof.
  induction u as [|b u IH]; intros [|y x] j a H Hj; simpl in *; try contradiction; [destruct j; discriminate|].
  destruct j; [injection Hj as <-; apply H | apply (IH x j a); [apply H | exact Hj]].
Qed.
Lemma contm_nth_error : forall u x j a, contm u x -> nth_error u j = Some a -> contv a (nth j x []).
Proof.
  induction u as [|b u IH]; intros [|y x] j a H Hj; simpl in *; try contradiction; [destruct j; discriminate|].
  destruct j; [injection Hj as <-; apply H | apply (IH x j a); [apply H | exact Hj]].
Qed.

Lemma aeval_c : forall Ls tabs, Forall2 (fun L t => tab_ok (layer_of_Q L) t) Ls tabs ->
  forall env a, cont (aeval tabs env a) (aden Ls env a).
Proof.
  intros Ls tabs HLt env a.
  assert (Hd : forall d t, nth_error tabs d = Some t -> tab_ok (layer_of_Q (nth d Ls dflt)) t).
  { intros d t Ht. revert d Ht. induction HLt as [|L t' Ls' tabs' H1 H2 IH]; intros d Ht;
      [destruct d; discriminate|]. destruct d; [injection Ht as <-; exact H1 | apply IH, Ht]. }
  destruct a as [d r k|d r s k|d r k|d r k i c]; simpl; unfold zn.
  - destruct (nth_error tabs d) as [t|] eqn:Ht; [|exact I].
    destruct (nth_error (dt_states t) _) as [st|] eqn:Hs; [|exact I].
    destruct (nth_error st _) as [x|] eqn:Hx; [|exact I].
    pose proof (proj1 (Hd d t Ht) _ _ _ Hs x Hx) as Hc.
    unfold layer_max_sqnorm. apply maxI_c, map_sqnorm_c, Hc.
  - destruct (nth_error tabs d) as [t|] eqn:Ht; [|exact I].
    destruct (nth_error (dt_states t) (Z.to_nat (zden env r))) as [s1|] eqn:Hs1; [|exact I].
    destruct (nth_error (dt_states t) (Z.to_nat (zden env s))) as [s2|] eqn:Hs2; [|exact I].
    destruct (nth_error s1 _) as [x|] eqn:Hx; [|exact I].
    destruct (nth_error s2 _) as [y|] eqn:Hy; [|exact I].
    pose proof (proj1 (Hd d t Ht) _ _ _ Hs1 x Hx) as Hc1.
    pose proof (proj1 (Hd d t Ht) _ _ _ Hs2 y Hy) as Hc2.
    unfold layer_max_sqdist. apply maxI_c, map_sqnorm_c, zipw_vsub_c; assumption.
  - destruct (nth_error tabs d) as [t|] eqn:Ht; [|exact I].
    destruct (nth_error (dt_parts t) _) as [st|] eqn:Hs; [|exact I].
    destruct (nth_error st _) as [p|] eqn:Hp; [|exact I].
    apply (proj2 (Hd d t Ht) _ _ _ Hs p Hp).
  - destruct (nth_error tabs d) as [t|] eqn:Ht; [|exact I].
    destruct (nth_error (dt_states t) _) as [st|] eqn:Hs; [|exact I].
    destruct (nth_error st _) as [x|] eqn:Hx; [|exact I].
    destruct (nth_error x _) as [u|] eqn:Hu; [|exact I].
    destruct (nth_error u _) as [v|] eqn:Hv; [|exact I].
    pose proof (proj1 (Hd d t Ht) _ _ _ Hs x Hx) as Hc.
    unfold layer_coord. apply (contv_nth_error u _ _ v); [apply (contm_nth_error x _ _ u); assumption | exact Hv].
Qed.

(** An integer term (its [zlit]) as a point, else the interval [i]. *)
Definition zexact (env : list Z) (t : xterm) (i : I.type) : I.type :=
  match zlit env t with Some z => I.fromZ prec z | None => i end.

Lemma zexact_c : forall Ls env t i, contains (I.convert i) (xdenX Ls env t) ->
  contains (I.convert (zexact env t i)) (xdenX Ls env t).
Proof.
  intros Ls env t i H. unfold zexact. destruct (zlit env t) eqn:E; [|exact H].
  rewrite (zlit_X Ls t env z E). apply fromZ_c.
Qed.

Fixpoint xeval (tabs : list dtab) (env : list Z) (t : xterm) : I.type :=
  match t with
  | XInt z => I.fromZ prec z
  | XFrac p q => I.div prec (I.fromZ prec p) (I.fromZ prec (Zpos q))
  | XVar n => I.fromZ prec (nth n env 0%Z)
  | XQ q => qI q
  | XZ z => I.fromZ prec z
  | XPi => I.pi prec
  | XAdd a b => zexact env (XAdd a b) (I.add prec (xeval tabs env a) (xeval tabs env b))
  | XSub a b => zexact env (XSub a b) (I.sub prec (xeval tabs env a) (xeval tabs env b))
  | XMul a b => I.mul prec (xeval tabs env a) (xeval tabs env b)
  | XDiv a b => I.div prec (xeval tabs env a) (xeval tabs env b)
  | XNeg a => I.neg (xeval tabs env a)
  | XAbs a => I.abs (xeval tabs env a)
  | XMin a b => imin (xeval tabs env a) (xeval tabs env b)
  | XMax a b => imax (xeval tabs env a) (xeval tabs env b)
  | XPow a n => I.power_int prec (xeval tabs env a) n
  | XExp a => I.exp prec (xeval tabs env a)
  | XLn a => I.ln prec (xeval tabs env a)
  | XSqrt a => I.sqrt prec (xeval tabs env a)
  | XSin a => I.sin prec (xeval tabs env a)
  | XCos a => I.cos prec (xeval tabs env a)
  | XSum lo hi b => fold_right (fun k acc => I.add prec (xeval tabs (k :: env) b) acc) I.zero (rangeZ lo hi)
  | XAtom a => aeval tabs env a
  end.

Lemma xeval_c : forall Ls tabs, Forall2 (fun L t => tab_ok (layer_of_Q L) t) Ls tabs ->
  forall t env, contains (I.convert (xeval tabs env t)) (xdenX Ls env t).
Proof.
  intros Ls tabs HLt. induction t; intros env; cbn [xeval xdenX].
  - apply fromZ_c.
  - exact (I.div_correct prec _ _ _ _ (fromZ_c p) (fromZ_c (Zpos q))).
  - apply fromZ_c.
  - apply qI_c.
  - apply fromZ_c.
  - apply I.pi_correct.
  - apply (zexact_c Ls env (XAdd t1 t2)). exact (I.add_correct prec _ _ _ _ (IHt1 env) (IHt2 env)).
  - apply (zexact_c Ls env (XSub t1 t2)). exact (I.sub_correct prec _ _ _ _ (IHt1 env) (IHt2 env)).
  - exact (I.mul_correct prec _ _ _ _ (IHt1 env) (IHt2 env)).
  - exact (I.div_correct prec _ _ _ _ (IHt1 env) (IHt2 env)).
  - exact (I.neg_correct _ _ (IHt env)).
  - exact (I.abs_correct _ _ (IHt env)).
  - exact (imin_c _ _ _ _ (IHt1 env) (IHt2 env)).
  - exact (imax_c _ _ _ _ (IHt1 env) (IHt2 env)).
  - exact (I.power_int_correct prec n _ _ (IHt env)).
  - exact (I.exp_correct prec _ _ (IHt env)).
  - exact (I.ln_correct prec _ _ (IHt env)).
  - exact (I.sqrt_correct prec _ _ (IHt env)).
  - exact (I.sin_correct prec _ _ (IHt env)).
  - exact (I.cos_correct prec _ _ (IHt env)).
  - induction (rangeZ lo hi) as [|k l IHl]; cbn [fold_right]; [exact zero_c|].
    exact (I.add_correct prec _ _ _ _ (IHt (k :: env)) IHl).
  - apply aeval_c, HLt.
Qed.

(** Comparisons decided on the ends of the enclosures (both real floats). *)
Definition ile (a b : I.type) : bool :=
  match a, b with
  | Float.Ibnd _ ua, Float.Ibnd lb _ =>
      F.real ua && F.real lb && match F.cmp ua lb with Xlt | Xeq => true | _ => false end
  | _, _ => false end.
Definition ilt (a b : I.type) : bool :=
  match a, b with
  | Float.Ibnd _ ua, Float.Ibnd lb _ =>
      F.real ua && F.real lb && match F.cmp ua lb with Xlt => true | _ => false end
  | _, _ => false end.

Lemma icmp_sound : forall a b va vb (strict : bool),
  contains (I.convert a) va -> contains (I.convert b) vb ->
  (if strict then ilt a b else ile a b) = true ->
  exists x y, va = Xreal x /\ vb = Xreal y /\ (if strict then x < y else x <= y).
Proof.
  intros a b va vb strict Ha Hb H.
  destruct a as [|la ua]; [destruct strict; discriminate|]. destruct b as [|lb ub]; [destruct strict; discriminate|].
  assert (Hr : F.real ua = true /\ F.real lb = true /\
            (if strict then F.cmp ua lb = Xlt else F.cmp ua lb = Xlt \/ F.cmp ua lb = Xeq)).
  { destruct strict; simpl in H; apply andb_prop in H as [H H3]; apply andb_prop in H as [H1 H2];
      (split; [exact H1 | split; [exact H2|]]); destruct (F.cmp ua lb); try discriminate; auto. }
  destruct Hr as [Hu [Hl Hc]].
  destruct (real_toX ua Hu) as [u [Eu Cu]]. destruct (real_toX lb Hl) as [l [El Cl]].
  assert (Hcmp : F.cmp ua lb = Xcmp (Xreal u) (Xreal l)).
  { pose proof (F.cmp_correct ua lb) as C. rewrite Cu, Cl in C. rewrite C, Eu, El. reflexivity. }
  unfold I.convert in Ha, Hb.
  destruct (F.valid_lb la && F.valid_ub ua); [|destruct va; simpl in Ha; try contradiction; lra].
  destruct (F.valid_lb lb && F.valid_ub ub); [|destruct vb; simpl in Hb; try contradiction; lra].
  rewrite Eu in Ha. rewrite El in Hb.
  destruct va as [|x]; [contradiction|]. destruct vb as [|y]; [contradiction|].
  exists x, y. split; [reflexivity | split; [reflexivity|]].
  destruct Ha as [_ Ha]. destruct Hb as [Hb _].
  simpl in Hcmp. destruct (Raux.Rcompare_spec u l) as [L|L|L].
  - destruct strict; lra.
  - destruct strict; [rewrite Hcmp in Hc; discriminate | lra].
  - destruct strict; [rewrite Hcmp in Hc; discriminate | destruct Hc as [Hc|Hc]; rewrite Hcmp in Hc; discriminate].
Qed.

Fixpoint xdecide (tabs : list dtab) (env : list Z) (f : xform) : bool :=
  match f with
  | XTrue => true
  | XLe a b => ile (xeval tabs env a) (xeval tabs env b)
  | XLt a b => ilt (xeval tabs env a) (xeval tabs env b)
  | XGe a b => ile (xeval tabs env b) (xeval tabs env a)
  | XGt a b => ilt (xeval tabs env b) (xeval tabs env a)
  | XNe a b => ilt (xeval tabs env a) (xeval tabs env b) || ilt (xeval tabs env b) (xeval tabs env a)
  | XAnd f g => xdecide tabs env f && xdecide tabs env g
  | XOr f g => xdecide tabs env f || xdecide tabs env g
  | XAll lo hi f => forallb (fun k => xdecide tabs (k :: env) f) (rangeZ lo hi)
  | XEx lo hi f => existsb (fun k => xdecide tabs (k :: env) f) (rangeZ lo hi)
  end.

Lemma xcmp_sound : forall Ls tabs, Forall2 (fun L t => tab_ok (layer_of_Q L) t) Ls tabs ->
  forall env a b (strict : bool),
  (if strict then ilt (xeval tabs env a) (xeval tabs env b) else ile (xeval tabs env a) (xeval tabs env b)) = true ->
  if strict then xden Ls env a < xden Ls env b else xden Ls env a <= xden Ls env b.
Proof.
  intros Ls tabs H env a b strict Hc.
  destruct (icmp_sound _ _ _ _ strict (xeval_c Ls tabs H a env) (xeval_c Ls tabs H b env) Hc)
    as [x [y [Ex [Ey Hxy]]]].
  rewrite (xdenX_real Ls a env x Ex), (xdenX_real Ls b env y Ey). exact Hxy.
Qed.

Theorem xdecide_sound : forall Ls tabs, Forall2 (fun L t => tab_ok (layer_of_Q L) t) Ls tabs ->
  forall f env, xdecide tabs env f = true -> xfden Ls env f.
Proof.
  intros Ls tabs HLt. induction f; intros env H; simpl in H |- *.
  - exact I.
  - exact (xcmp_sound Ls tabs HLt env a b false H).
  - exact (xcmp_sound Ls tabs HLt env a b true H).
  - apply Rle_ge. exact (xcmp_sound Ls tabs HLt env b a false H).
  - exact (xcmp_sound Ls tabs HLt env b a true H).
  - apply orb_prop in H as [H|H].
    + apply Rlt_not_eq. exact (xcmp_sound Ls tabs HLt env a b true H).
    + apply Rgt_not_eq. exact (xcmp_sound Ls tabs HLt env b a true H).
  - apply andb_prop in H as [H1 H2]. split; [apply IHf1 | apply IHf2]; assumption.
  - apply orb_prop in H as [H|H]; [left; apply IHf1 | right; apply IHf2]; assumption.
  - intros k Hk. rewrite forallb_forall in H. apply IHf, H, in_rangeZ, Hk.
  - apply existsb_exists in H as [k [Hk Hd]]. exists k. split; [apply in_rangeZ, Hk | apply IHf, Hd].
Qed.

(** The check a generated proof runs: the data's tables (built once), then the formula. *)
Definition xcheck (Ls : list layerQ) (parts : list bool) (f : xform) : bool :=
  xdecide (map (fun '(L, w) => build L w) (combine Ls parts)) [] f.

Theorem xcheck_sound : forall Ls parts f, length parts = length Ls -> xcheck Ls parts f = true -> xfden Ls [] f.
Proof.
  intros Ls parts f Hl H. apply (xdecide_sound Ls (map (fun '(L, w) => build L w) (combine Ls parts))); [|exact H].
  clear H. revert parts Hl. induction Ls as [|L Ls IH]; intros [|w ws] Hl; simpl in Hl |- *; try discriminate;
    constructor; [apply build_ok | apply IH; lia].
Qed.

End Prec.
End LayerEval.


(** Primitive floats (53 bits, fast) and big-integer floats (any precision). *)
Module LP := LayerEval PrimitiveFloat.
Module LB := LayerEval Tactic.SFBI2.

(** Conversion between a generated statement (over [layer_coord] and the other layer
    quantities) and the denotation [xfden] of its reflected formula: unfold the
    denotation, never the layer map (whose unfolding on both sides took Coq's kernel
    minutes at 17 steps of 8 tokens, where this takes milliseconds). Exported with the
    library, so Coq's kernel uses it at [Qed] as well. *)
Strategy 1000 [layer_coord layer_max_sqnorm layer_max_sqdist layer_partition].
Strategy expand [xfden xden aden zden].
