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

Definition err_max_of d G B : Q :=
  odflt (maxQ (map (fun x => fst (fst (fst x))) (lemma_rows_of d G B))).
Definition lemma_a_of d G B : Q :=
  odflt (maxQ (map (fun x => snd (fst (fst x))) (lemma_rows_of d G B))).
Definition lemma_b_of d G B : Q :=
  odflt (maxQ (flat_map (fun x => match snd (fst x) with Some v => [v] | None => [] end)
                        (lemma_rows_of d G B))).
Definition lemma_a_row_of d G B (t : Q) : Q :=
  odflt (maxQ (map (fun x => snd (fst (fst x)) - 2 * t * snd x) (lemma_rows_of d G B))).
Definition lemma_b_row_of d G B (t : Q) : Q :=
  odflt (maxQ (flat_map (fun x => match snd (fst x) with
                                  | Some v => [v - 2 * t * snd x] | None => [] end)
                        (lemma_rows_of d G B))).

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
