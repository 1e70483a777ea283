(** * The Boolean limit, for the discrete map (clusters/boolean-limit, issue 39).

    The map the claim runs (src/claims/clusters/boolean_limit: the y-run, with
    Q = K = V = 1 after the exact rescaling y = √(QK)·x of e:Idnonresca, and
    step h = Δt·V), on n tokens y_0 < … < y_{n−1} (indices from 0: the paper's
    token 1 is index 0, its token n is index n − 1):

      y_i^{k+1} = y_i^k + h Σ_j P_ij^k y_j^k,
      P_ij^k = e^{y_i^k y_j^k} / Σ_l e^{y_i^k y_l^k}          ([ystep], [yattn], [yiter]).

    [layer_iter_unit] proves it is the library's [layer_stepR] (coq/Attncheck.v)
    iterated with Q = K = V = [[1]] and Δt = h; [layer_iter_rescaled] that the
    scalar layer (q, k, v, Δt), multiplied by a with a² = q k, is the map with
    h = Δt v from a·x^0 (the rescaling, exactly, as the claim uses it).  The
    theorems speak of a state y and its iterates; for the state y^K reached at a
    step K, [yiter_plus] gives yiter n h y^0 (k + K) = yiter n h (yiter n h y^0 K) k.

    The threshold condition on A (the discrete analogue of the flow's A_n):

      (T)  0 < A  and  2 (n − 1) ≤ A² e^{A²/2 + 1}.

    The least such A is √(2 W((n − 1)/e)) (W: Lambert's; n = 2: 0.746, 3: 0.962,
    8: 1.395, 20: 1.746), and A = √(2 ln n) satisfies (T) for n ≥ 2
    ([threshold_sqrt_2ln]).  A does not depend on h.

    Theorems (all for any h ≥ 0, resp. h > 0 where a limit is taken):
    - [order_and_gaps]: order is kept and every gap y_{i+1} − y_i is
      nondecreasing in k (l:distnondec);
    - [boolean_limit_rate]: for n ≥ 2, (T) and strictly ordered y = y^0, a token
      with y_i > A has |P_ij^k − δ_{j,n−1}| ≤ (n − 1) exp(−(1 + h/2)^k y_i g_top)
      for all j, k, g_top = y_{n−1} − y_{n−2}; a token with y_i < −A has
      |P_ij^k − δ_{j,0}| ≤ (n − 1) exp(−(1 + h/2)^k (−y_i) g_bot), g_bot = y_1 − y_0
      (l:auxiliary, l:unboundedparticles);
    - [boolean_limit_rows]: those rows converge to e_n, resp. e_1 (h > 0);
    - [boolean_limit_structure]: if every token but m has |y_i| > A, any
      entrywise limit P* of P^k has rows e_1 (y_i < −A), e_n (y_i > A) and
      P*_m: its rows take at most three values, so rank P* ≤ 3; columns other
      than 0 and n − 1 vanish outside row m (the leaders); e_1-rows come
      before every other row, e_n-rows after (l:onlyone, t:boolean);
    - [boolean_limit_escaped]: if every token has |y_i| > A, P^k converges and
      every row of the limit is e_1 or e_n (rank ≤ 2);
    - [boolean_limit_symmetric]: for n = 2c + 1 and y mirror-symmetric
      (y_{n−1−j} = −y_j), y_c^k = 0 and row c is (1/n, …, 1/n) at every k, and P^k
      converges to rows e_1 (i < c), (1/n, …, 1/n) (i = c), e_n (i > c), rank 3
      ([symmetric_limit_rank3]), once the other tokens have |y_i| > A.

    Proof (docs/papers/clusters.md, "The Boolean limit in Coq"): row i of P is
    the tilt by s = y_i of one measure on the tokens, so Σ_j P_ij y_j = m(s) with
    m(s) = Σ_j e^{s y_j} y_j / Σ_j e^{s y_j} nondecreasing ([ymean_mono], by the
    finite-sum identity 2(N(b)Z(a) − N(a)Z(b)) = Σ_{j,l} (y_j − y_l)(e^{b y_j + a y_l}
    − e^{a y_j + b y_l}) ≥ 0); above the threshold m(s) ≥ s/2 ([ymean_ge_half]),
    so such a token grows by the factor 1 + h/2 each step, whatever the others
    do; and P_ij ≤ e^{y_i (y_j − y_{n−1})} ≤ e^{−y_i g_top} for j ≠ n − 1.

    Not covered: the convergence of the one middle row m in general (it is
    covered when y_m escapes too — apply the theorems at a later step — and in
    the mirror-symmetric case); the flow.

    Checked by [make coq] and the test [coq::the_boolean_limit_lemma_is_proven_in_coq];
    [Print Assumptions] at the end must list only the axioms of Coq's standard
    reals. *)

From Coq Require Import Reals Lra Lia List.
From Attncheck Require Import Attncheck.
Import ListNotations.
Local Open Scope R_scope.

(** ** Finite sums: [bsum n f] = Σ_{j<n} f j *)

Fixpoint bsum (n : nat) (f : nat -> R) : R :=
  match n with O => 0 | S n' => f O + bsum n' (fun j => f (S j)) end.

Lemma bsum_ext : forall n f g, (forall j, (j < n)%nat -> f j = g j) -> bsum n f = bsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [reflexivity|].
  rewrite (H O) by lia. f_equal. apply IH. intros j Hj. apply H. lia.
Qed.

Lemma bsum_le : forall n f g, (forall j, (j < n)%nat -> f j <= g j) -> bsum n f <= bsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [lra|].
  apply Rplus_le_compat; [apply H; lia | apply IH; intros j Hj; apply H; lia].
Qed.

Lemma bsum_plus : forall n f g, bsum n (fun j => f j + g j) = bsum n f + bsum n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma bsum_scal : forall n c f, bsum n (fun j => c * f j) = c * bsum n f.
Proof. induction n as [|n IH]; intros c f; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma bsum_const : forall n c, bsum n (fun _ => c) = INR n * c.
Proof.
  induction n as [|n IH]; intros c; simpl bsum; [simpl; ring|].
  rewrite IH, S_INR. ring.
Qed.

Lemma bsum_nonneg : forall n f, (forall j, (j < n)%nat -> 0 <= f j) -> 0 <= bsum n f.
Proof.
  intros n f H. replace 0 with (bsum n (fun _ => 0)) by (rewrite bsum_const; ring).
  apply bsum_le, H.
Qed.

Lemma bsum_last : forall n f, bsum (S n) f = bsum n f + f n.
Proof.
  induction n as [|n IH]; intros f; [simpl; ring|].
  change (bsum (S (S n)) f) with (f O + bsum (S n) (fun j => f (S j))).
  rewrite IH. simpl. ring.
Qed.

Lemma bsum_swap : forall n m f,
  bsum n (fun j => bsum m (fun l => f j l)) = bsum m (fun l => bsum n (fun j => f j l)).
Proof.
  induction n as [|n IH]; intros m f; simpl.
  - rewrite bsum_const. ring.
  - rewrite IH, <- bsum_plus. reflexivity.
Qed.

Lemma bsum_ge_term : forall n f i, (forall j, (j < n)%nat -> 0 <= f j) -> (i < n)%nat ->
  f i <= bsum n f.
Proof.
  induction n as [|n IH]; intros f i H Hi; [lia|]. simpl.
  destruct i as [|i].
  - assert (0 <= bsum n (fun j => f (S j))) by (apply bsum_nonneg; intros j Hj; apply H; lia). lra.
  - assert (0 <= f O) by (apply H; lia).
    assert (f (S i) <= bsum n (fun j => f (S j))) by (apply (IH (fun j => f (S j))); [intros j Hj; apply H|]; lia).
    lra.
Qed.

Lemma bsum_ge_two : forall n f i l, (forall j, (j < n)%nat -> 0 <= f j) -> (i < n)%nat -> (l < n)%nat ->
  i <> l -> f i + f l <= bsum n f.
Proof.
  induction n as [|n IH]; intros f i l H Hi Hl Hil; [lia|]. simpl.
  assert (Hf : forall j, (j < n)%nat -> 0 <= f (S j)) by (intros j Hj; apply H; lia).
  destruct i as [|i], l as [|l]; [lia | | |].
  - pose proof (bsum_ge_term n (fun j => f (S j)) l Hf ltac:(lia)). lra.
  - pose proof (bsum_ge_term n (fun j => f (S j)) i Hf ltac:(lia)). lra.
  - assert (0 <= f O) by (apply H; lia).
    pose proof (IH (fun j => f (S j)) i l Hf ltac:(lia) ltac:(lia) ltac:(lia)). lra.
Qed.

Lemma bsum_rev : forall n f, bsum n (fun j => f (n - 1 - j)%nat) = bsum n f.
Proof.
  induction n as [|n IH]; intros f; [reflexivity|].
  rewrite (bsum_last n f). change (bsum (S n) (fun j => f (S n - 1 - j)%nat))
    with (f (S n - 1 - 0)%nat + bsum n (fun j => f (S n - 1 - S j)%nat)).
  replace (f (S n - 1 - 0)%nat) with (f n) by (f_equal; lia).
  rewrite <- (IH f). rewrite Rplus_comm. f_equal.
  apply bsum_ext. intros j Hj. f_equal. lia.
Qed.

Lemma bsum_pos : forall n f, (0 < n)%nat -> (forall j, (j < n)%nat -> 0 < f j) -> 0 < bsum n f.
Proof.
  intros n f Hn H. destruct n as [|n]; [lia|]. simpl.
  assert (0 < f O) by (apply H; lia).
  assert (0 <= bsum n (fun j => f (S j))) by (apply bsum_nonneg; intros j Hj; left; apply H; lia).
  lra.
Qed.

Lemma bsum_minus : forall n f g, bsum n (fun j => f j - g j) = bsum n f - bsum n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma bsum_mult : forall n m f g,
  bsum n f * bsum m g = bsum n (fun j => bsum m (fun l => f j * g l)).
Proof.
  intros n m f g. rewrite Rmult_comm, <- bsum_scal. apply bsum_ext. intros j _.
  rewrite Rmult_comm, <- bsum_scal. apply bsum_ext. intros l _. ring.
Qed.

(** ** The map *)

(** Z(s) = Σ_l e^{s y_l}: the softmax denominator of a row with tilt s. *)
Definition ypart (n : nat) (y : nat -> R) (s : R) : R := bsum n (fun l => exp (s * y l)).
Definition yattn (n : nat) (y : nat -> R) (i j : nat) : R := exp (y i * y j) / ypart n y (y i).
Definition ystep (n : nat) (h : R) (y : nat -> R) (i : nat) : R :=
  y i + h * bsum n (fun j => yattn n y i j * y j).
Definition yiter (n : nat) (h : R) (y : nat -> R) (k : nat) : nat -> R := Nat.iter k (ystep n h) y.

(** m(s) = Σ_j e^{s y_j} y_j / Z(s): row i's mean Σ_j P_ij y_j is m(y_i) ([ystep_ymean]). *)
Definition ymean (n : nat) (y : nat -> R) (s : R) : R :=
  bsum n (fun j => exp (s * y j) * y j) / ypart n y s.

Lemma part_pos : forall n y s, (0 < n)%nat -> 0 < ypart n y s.
Proof. intros n y s Hn. apply bsum_pos; [exact Hn | intros j _; apply exp_pos]. Qed.

Lemma ystep_ymean : forall n h y i, ystep n h y i = y i + h * ymean n y (y i).
Proof.
  intros n h y i. unfold ystep, ymean, yattn. f_equal. f_equal.
  unfold Rdiv. rewrite Rmult_comm, <- bsum_scal. apply bsum_ext. intros j _. ring.
Qed.

Lemma yiter_S : forall n h y k, yiter n h y (S k) = ystep n h (yiter n h y k).
Proof. reflexivity. Qed.

Lemma exp_le_compat : forall a b, a <= b -> exp a <= exp b.
Proof. intros a b [H|H]; [left; apply exp_increasing, H | right; rewrite H; reflexivity]. Qed.

(** The tilted mean is nondecreasing in the tilt. *)
Lemma ymean_mono : forall n y a b, (0 < n)%nat -> a <= b -> ymean n y a <= ymean n y b.
Proof.
  intros n y a b Hn Hab. unfold ymean.
  set (Na := bsum n (fun j => exp (a * y j) * y j)).
  set (Nb := bsum n (fun j => exp (b * y j) * y j)).
  pose proof (part_pos n y a Hn) as Za. pose proof (part_pos n y b Hn) as Zb.
  set (T := fun j l => y j * (exp (b * y j) * exp (a * y l) - exp (a * y j) * exp (b * y l))).
  assert (HD : Nb * ypart n y a - Na * ypart n y b = bsum n (fun j => bsum n (fun l => T j l))).
  { unfold Na, Nb, ypart, T. rewrite !bsum_mult, <- bsum_minus. apply bsum_ext. intros j _.
    rewrite <- bsum_minus. apply bsum_ext. intros l _. ring. }
  assert (H2 : 2 * bsum n (fun j => bsum n (fun l => T j l)) =
               bsum n (fun j => bsum n (fun l => (y j - y l) *
                 (exp (b * y j + a * y l) - exp (a * y j + b * y l))))).
  { replace (2 * bsum n (fun j => bsum n (fun l => T j l))) with
      (bsum n (fun j => bsum n (fun l => T j l)) + bsum n (fun l => bsum n (fun j => T j l))).
    2:{ rewrite bsum_swap. ring. }
    rewrite <- bsum_plus. apply bsum_ext. intros j _. rewrite <- bsum_plus. apply bsum_ext. intros l _.
    unfold T. rewrite !exp_plus. ring. }
  assert (Hpos : 0 <= bsum n (fun j => bsum n (fun l => T j l))).
  { cut (0 <= 2 * bsum n (fun j => bsum n (fun l => T j l))); [lra|]. rewrite H2.
    apply bsum_nonneg. intros j _. apply bsum_nonneg. intros l _.
    destruct (Rle_dec (y l) (y j)) as [Hle|Hlt].
    - assert (exp (a * y j + b * y l) <= exp (b * y j + a * y l)) by (apply exp_le_compat; nra).
      apply Rmult_le_pos; lra.
    - assert (exp (b * y j + a * y l) <= exp (a * y j + b * y l)) by (apply exp_le_compat; nra).
      replace ((y j - y l) * (exp (b * y j + a * y l) - exp (a * y j + b * y l)))
        with ((y l - y j) * (exp (a * y j + b * y l) - exp (b * y j + a * y l))) by ring.
      apply Rmult_le_pos; lra. }
  (* Nb / Zb − Na / Za = (Nb Za − Na Zb) / (Za Zb) ≥ 0 *)
  apply Rmult_le_reg_r with (ypart n y a * ypart n y b); [nra|].
  replace (Na / ypart n y a * (ypart n y a * ypart n y b)) with (Na * ypart n y b) by (field; lra).
  replace (Nb / ypart n y b * (ypart n y a * ypart n y b)) with (Nb * ypart n y a) by (field; lra).
  lra.
Qed.

(** ** (a) Order kept, gaps nondecreasing, for every h ≥ 0 (l:distnondec) *)

Lemma ystep_gap : forall n h y i i', (0 < n)%nat -> 0 <= h -> y i <= y i' ->
  y i' - y i <= ystep n h y i' - ystep n h y i.
Proof.
  intros n h y i i' Hn Hh Hle. rewrite !ystep_ymean.
  pose proof (ymean_mono n y (y i) (y i') Hn Hle). nra.
Qed.

Lemma yiter_gap : forall n h y i i' k, (0 < n)%nat -> 0 <= h -> y i <= y i' ->
  y i' - y i <= yiter n h y k i' - yiter n h y k i.
Proof.
  intros n h y i i' k Hn Hh Hle. induction k as [|k IH]; [simpl; lra|].
  rewrite yiter_S. pose proof (ystep_gap n h (yiter n h y k) i i' Hn Hh ltac:(lra)). lra.
Qed.

Theorem order_and_gaps : forall (n : nat) (h : R) (y : nat -> R),
  0 <= h ->
  (forall i, (S i < n)%nat -> y i <= y (S i)) ->
  forall k i, (S i < n)%nat ->
    yiter n h y k i <= yiter n h y k (S i) /\
    y (S i) - y i <= yiter n h y k (S i) - yiter n h y k i /\
    yiter n h y k (S i) - yiter n h y k i <= yiter n h y (S k) (S i) - yiter n h y (S k) i.
Proof.
  intros n h y Hh Hord k i Hi.
  assert (Hn : (0 < n)%nat) by lia.
  pose proof (yiter_gap n h y i (S i) k Hn Hh (Hord i Hi)) as Hg.
  pose proof (Hord i Hi).
  split; [lra | split; [exact Hg|]].
  rewrite yiter_S. apply ystep_gap; [exact Hn | exact Hh | lra].
Qed.

(** ** (b) Escape above the threshold (l:auxiliary)

    s u e^{−s u} ≤ 1/e, from e^x ≥ 1 + x. *)
Lemma exp_mul_bound : forall s u, 0 < s -> 0 < u ->
  exp (s ^ 2 / 2 - s * u) * u <= exp (s ^ 2 / 2 - 1) / s.
Proof.
  intros s u Hs Hu.
  pose proof (exp_ineq1_le (s * u - 1)) as He.
  replace (exp (s ^ 2 / 2 - 1)) with (exp (s ^ 2 / 2 - s * u) * exp (s * u - 1))
    by (rewrite <- exp_plus; f_equal; ring).
  pose proof (exp_pos (s ^ 2 / 2 - s * u)).
  apply Rmult_le_reg_r with s; [exact Hs|].
  replace (exp (s ^ 2 / 2 - s * u) * exp (s * u - 1) / s * s)
    with (exp (s ^ 2 / 2 - s * u) * exp (s * u - 1)) by (field; lra).
  nra.
Qed.

(** m(s) ≥ s/2 for s = y_i > 0 with s² e^{s²/2+1} ≥ 2(n − 1): every term of
    Σ_j e^{s y_j}(y_j − s/2) is ≥ −e^{s²/2−1}/s, and term i is e^{s²} s/2. *)
Lemma ymean_ge_half : forall n y i, (i < n)%nat -> 0 < y i ->
  2 * (INR n - 1) <= y i ^ 2 * exp (y i ^ 2 / 2 + 1) ->
  y i / 2 <= ymean n y (y i).
Proof.
  intros n y i Hi Hs Hthr. set (s := y i) in *.
  assert (Hn : (0 < n)%nat) by lia.
  pose proof (part_pos n y s Hn) as HZ.
  set (B := exp (s ^ 2 / 2 - 1) / s).
  assert (HB : 0 < B) by (unfold B; apply Rdiv_lt_0_compat; [apply exp_pos | exact Hs]).
  set (f := fun j => exp (s * y j) * (y j - s / 2)).
  assert (Hf : forall j, -B <= f j).
  { intros j. unfold f. destruct (Rle_dec (s / 2) (y j)) as [Hle|Hlt].
    - pose proof (exp_pos (s * y j)). nra.
    - set (u := s / 2 - y j). assert (Hu : 0 < u) by (unfold u; lra).
      replace (s * y j) with (s ^ 2 / 2 - s * u) by (unfold u; field).
      replace (y j - s / 2) with (- u) by (unfold u; field).
      pose proof (exp_mul_bound s u Hs Hu). fold B in H.
      replace (exp (s ^ 2 / 2 - s * u) * - u) with (- (exp (s ^ 2 / 2 - s * u) * u)) by ring.
      lra. }
  assert (Hsum : f i + B - INR n * B <= bsum n f).
  { replace (bsum n f) with (bsum n (fun j => f j + B) - INR n * B)
      by (rewrite bsum_plus, bsum_const; ring).
    assert (f i + B <= bsum n (fun j => f j + B)).
    { apply (bsum_ge_term n (fun j => f j + B) i); [intros j _; pose proof (Hf j); lra | exact Hi]. }
    lra. }
  assert (Hfi : f i = exp (s ^ 2 / 2 - 1) * exp (s ^ 2 / 2 + 1) * (s / 2)).
  { unfold f. change (y i) with s. rewrite <- exp_plus.
    replace (s ^ 2 / 2 - 1 + (s ^ 2 / 2 + 1)) with (s * s) by field.
    replace (s - s / 2) with (s / 2) by field. reflexivity. }
  assert (Hnum : 0 <= bsum n f).
  { (* f i − (n − 1) B = e^{s²/2−1}/(2s) · (s² e^{s²/2+1} − 2(n − 1)) ≥ 0 *)
    assert (HE : 0 < exp (s ^ 2 / 2 - 1)) by apply exp_pos.
    assert (f i + B - INR n * B = exp (s ^ 2 / 2 - 1) / (2 * s) *
              (s ^ 2 * exp (s ^ 2 / 2 + 1) - 2 * (INR n - 1))).
    { rewrite Hfi. unfold B. field. lra. }
    assert (0 <= exp (s ^ 2 / 2 - 1) / (2 * s) * (s ^ 2 * exp (s ^ 2 / 2 + 1) - 2 * (INR n - 1))).
    { apply Rmult_le_pos; [left; apply Rdiv_lt_0_compat; lra | lra]. }
    lra. }
  unfold ymean.
  assert (Hdecomp : bsum n (fun j => exp (s * y j) * y j) = bsum n f + s / 2 * ypart n y s).
  { unfold f, ypart. rewrite <- bsum_scal, <- bsum_plus. apply bsum_ext. intros j _. ring. }
  rewrite Hdecomp.
  apply Rmult_le_reg_r with (ypart n y s); [exact HZ|].
  replace ((bsum n f + s / 2 * ypart n y s) / ypart n y s * ypart n y s)
    with (bsum n f + s / 2 * ypart n y s) by (field; lra).
  lra.
Qed.

Lemma ymean_neg : forall n y s, ymean n (fun j => - y j) (- s) = - ymean n y s.
Proof.
  intros n y s. unfold ymean, ypart.
  replace (bsum n (fun l => exp (- s * - y l))) with (bsum n (fun l => exp (s * y l)))
    by (apply bsum_ext; intros l _; f_equal; ring).
  replace (bsum n (fun j => exp (- s * - y j) * - y j))
    with (-1 * bsum n (fun j => exp (s * y j) * y j)).
  2:{ rewrite <- bsum_scal. apply bsum_ext. intros j _. replace (- s * - y j) with (s * y j) by ring. ring. }
  unfold Rdiv. ring.
Qed.

Lemma ymean_le_half : forall n y i, (i < n)%nat -> y i < 0 ->
  2 * (INR n - 1) <= y i ^ 2 * exp (y i ^ 2 / 2 + 1) ->
  ymean n y (y i) <= y i / 2.
Proof.
  intros n y i Hi Hs Hthr.
  pose proof (ymean_ge_half n (fun j => - y j) i Hi ltac:(lra)) as H. cbv beta in H.
  replace ((- y i) ^ 2) with (y i ^ 2) in H by ring.
  specialize (H Hthr). rewrite ymean_neg in H. lra.
Qed.

(** The threshold condition holds above A. *)
Lemma threshold_mono : forall n A s, 0 < A -> A <= s ->
  2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  2 * (INR n - 1) <= s ^ 2 * exp (s ^ 2 / 2 + 1).
Proof.
  intros n A s HA Hs H.
  assert (HA2 : A ^ 2 <= s ^ 2) by nra.
  assert (exp (A ^ 2 / 2 + 1) <= exp (s ^ 2 / 2 + 1)) by (apply exp_le_compat; lra).
  assert (0 < exp (A ^ 2 / 2 + 1)) by apply exp_pos.
  assert (A ^ 2 * exp (A ^ 2 / 2 + 1) <= s ^ 2 * exp (s ^ 2 / 2 + 1)).
  { apply Rmult_le_compat; [nra | lra | exact HA2 | assumption]. }
  lra.
Qed.

(** A token above A grows at least geometrically, whatever the others do. *)
Lemma yiter_up : forall n h A y i, (i < n)%nat -> 0 <= h -> 0 < A ->
  2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) -> A < y i ->
  forall k, (1 + h / 2) ^ k * y i <= yiter n h y k i.
Proof.
  intros n h A y i Hi Hh HA Hthr Hy k. induction k as [|k IH]; [simpl; lra|].
  assert (Hp : 1 <= (1 + h / 2) ^ k) by (apply pow_R1_Rle; lra).
  assert (y i <= (1 + h / 2) ^ k * y i)
    by (rewrite <- (Rmult_1_l (y i)) at 1; apply Rmult_le_compat_r; lra).
  assert (Hk : A < yiter n h y k i) by lra.
  rewrite yiter_S, ystep_ymean.
  pose proof (ymean_ge_half n (yiter n h y k) i Hi ltac:(lra)
                (threshold_mono n A (yiter n h y k i) HA ltac:(lra) Hthr)).
  simpl pow.
  assert (0 <= h * (ymean n (yiter n h y k) (yiter n h y k i) - yiter n h y k i / 2))
    by (apply Rmult_le_pos; lra).
  assert (0 <= (1 + h / 2) * (yiter n h y k i - (1 + h / 2) ^ k * y i))
    by (apply Rmult_le_pos; lra).
  lra.
Qed.

Lemma yiter_down : forall n h A y i, (i < n)%nat -> 0 <= h -> 0 < A ->
  2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) -> y i < - A ->
  forall k, yiter n h y k i <= (1 + h / 2) ^ k * y i.
Proof.
  intros n h A y i Hi Hh HA Hthr Hy k. induction k as [|k IH]; [simpl; lra|].
  assert (Hp : 1 <= (1 + h / 2) ^ k) by (apply pow_R1_Rle; lra).
  assert ((1 + h / 2) ^ k * y i <= y i)
    by (rewrite <- (Rmult_1_l (y i)) at 2; rewrite (Rmult_comm _ (y i)), (Rmult_comm 1 (y i));
        apply Rmult_le_compat_neg_l; lra).
  assert (Hk : yiter n h y k i < - A) by lra.
  rewrite yiter_S, ystep_ymean.
  assert (Hs2 : 2 * (INR n - 1) <= yiter n h y k i ^ 2 * exp (yiter n h y k i ^ 2 / 2 + 1)).
  { replace (yiter n h y k i ^ 2) with ((- yiter n h y k i) ^ 2) by ring.
    apply (threshold_mono n A (- yiter n h y k i) HA ltac:(lra) Hthr). }
  pose proof (ymean_le_half n (yiter n h y k) i Hi ltac:(lra) Hs2).
  simpl pow.
  assert (0 <= h * (yiter n h y k i / 2 - ymean n (yiter n h y k) (yiter n h y k i)))
    by (apply Rmult_le_pos; lra).
  assert (0 <= (1 + h / 2) * ((1 + h / 2) ^ k * y i - yiter n h y k i))
    by (apply Rmult_le_pos; lra).
  lra.
Qed.

(** ** Rows of P (l:unboundedparticles) *)
Lemma attn_nonneg : forall n y i j, (0 < n)%nat -> 0 <= yattn n y i j.
Proof.
  intros n y i j Hn. unfold yattn. left. apply Rdiv_lt_0_compat; [apply exp_pos | apply part_pos, Hn].
Qed.

Lemma attn_sum : forall n y i, (0 < n)%nat -> bsum n (fun j => yattn n y i j) = 1.
Proof.
  intros n y i Hn. pose proof (part_pos n y (y i) Hn) as HZ.
  unfold yattn. replace (bsum n (fun j => exp (y i * y j) / ypart n y (y i)))
    with (/ ypart n y (y i) * bsum n (fun j => exp (y i * y j))).
  - fold (ypart n y (y i)). field. lra.
  - rewrite <- bsum_scal. apply bsum_ext. intros j _. unfold Rdiv. ring.
Qed.

(** |P_ij − δ_jt| ≤ 1 − P_it: the distance of row i to e_t. *)
Lemma row_dist : forall n y i t j, (0 < n)%nat -> (t < n)%nat -> (j < n)%nat ->
  Rabs (yattn n y i j - (if Nat.eqb j t then 1 else 0)) <= 1 - yattn n y i t.
Proof.
  intros n y i t j Hn Ht Hj.
  pose proof (attn_sum n y i Hn) as Hs.
  assert (Hnn : forall l, (l < n)%nat -> 0 <= yattn n y i l) by (intros l _; apply attn_nonneg, Hn).
  destruct (Nat.eqb_spec j t) as [->|Hjt].
  - pose proof (bsum_ge_term n (fun l => yattn n y i l) t Hnn Ht). cbv beta in H.
    rewrite Rabs_left1; lra.
  - pose proof (bsum_ge_two n (fun l => yattn n y i l) j t Hnn Hj Ht Hjt). cbv beta in H.
    pose proof (Hnn j Hj). rewrite Rabs_right; lra.
Qed.

Lemma exp_div : forall a b, exp a / exp b = exp (a - b).
Proof.
  intros a b. unfold Rminus. rewrite exp_plus, exp_Ropp. reflexivity.
Qed.

Lemma ordered_le : forall n (y : nat -> R), (forall i, (S i < n)%nat -> y i < y (S i)) ->
  forall j l, (j <= l)%nat -> (l < n)%nat -> y j <= y l.
Proof.
  intros n y Hord j l. induction l as [|l IH]; intros Hjl Hl.
  - replace j with O by lia. lra.
  - destruct (Nat.eq_dec j (S l)) as [->|Hne]; [lra|].
    pose proof (IH ltac:(lia) ltac:(lia)). pose proof (Hord l Hl). lra.
Qed.

(** Row i of a positive token, for ordered tokens: within (n − 1) e^{−y_i g} of e_n,
    g = y_n − y_{n−1} (indices from 0: n − 1 and n − 2). *)
Lemma row_top : forall n y i, (2 <= n)%nat -> (forall l, (S l < n)%nat -> y l < y (S l)) ->
  (i < n)%nat -> 0 < y i ->
  1 - yattn n y i (n - 1) <= (INR n - 1) * exp (- y i * (y (n - 1)%nat - y (n - 2)%nat)).
Proof.
  intros n y i Hn Hord Hi Hy.
  assert (Hn0 : (0 < n)%nat) by lia.
  pose proof (attn_sum n y i Hn0) as Hs.
  replace n with (S (n - 1)) in Hs at 1 by lia. rewrite bsum_last in Hs.
  assert (HZ : exp (y i * y (n - 1)%nat) <= ypart n y (y i)).
  { apply (bsum_ge_term n (fun l => exp (y i * y l))); [intros l _; left; apply exp_pos | lia]. }
  pose proof (part_pos n y (y i) Hn0).
  assert (Hb : forall j, (j < n - 1)%nat -> yattn n y i j <= exp (- y i * (y (n - 1)%nat - y (n - 2)%nat))).
  { intros j Hj. unfold yattn.
    apply Rle_trans with (exp (y i * y j) / exp (y i * y (n - 1)%nat)).
    - unfold Rdiv. apply Rmult_le_compat_l; [left; apply exp_pos|].
      apply Rinv_le_contravar; [apply exp_pos | exact HZ].
    - rewrite exp_div. apply exp_le_compat.
      pose proof (ordered_le n y Hord j (n - 2) ltac:(lia) ltac:(lia)).
      nra. }
  assert (bsum (n - 1) (fun j => yattn n y i j) <= bsum (n - 1) (fun _ => exp (- y i * (y (n - 1)%nat - y (n - 2)%nat)))).
  { apply bsum_le. exact Hb. }
  rewrite bsum_const, minus_INR in H0 by lia. simpl INR in H0. lra.
Qed.

Lemma row_bottom : forall n y i, (2 <= n)%nat -> (forall l, (S l < n)%nat -> y l < y (S l)) ->
  (i < n)%nat -> y i < 0 ->
  1 - yattn n y i 0 <= (INR n - 1) * exp (y i * (y 1%nat - y 0%nat)).
Proof.
  intros n y i Hn Hord Hi Hy.
  assert (Hn0 : (0 < n)%nat) by lia.
  pose proof (attn_sum n y i Hn0) as Hs.
  replace n with (S (n - 1)) in Hs at 1 by lia. simpl bsum in Hs.
  assert (HZ : exp (y i * y 0%nat) <= ypart n y (y i)).
  { apply (bsum_ge_term n (fun l => exp (y i * y l))); [intros l _; left; apply exp_pos | lia]. }
  pose proof (part_pos n y (y i) Hn0).
  assert (Hb : forall j, (j < n - 1)%nat -> yattn n y i (S j) <= exp (y i * (y 1%nat - y 0%nat))).
  { intros j Hj. unfold yattn.
    apply Rle_trans with (exp (y i * y (S j)) / exp (y i * y 0%nat)).
    - unfold Rdiv. apply Rmult_le_compat_l; [left; apply exp_pos|].
      apply Rinv_le_contravar; [apply exp_pos | exact HZ].
    - rewrite exp_div. apply exp_le_compat.
      pose proof (ordered_le n y Hord 1 (S j) ltac:(lia) ltac:(lia)).
      nra. }
  assert (bsum (n - 1) (fun j => yattn n y i (S j)) <= bsum (n - 1) (fun _ => exp (y i * (y 1%nat - y 0%nat)))).
  { apply bsum_le. exact Hb. }
  rewrite bsum_const, minus_INR in H0 by lia. simpl INR in H0. lra.
Qed.

Lemma yiter_ordered : forall n h y, 0 <= h -> (forall l, (S l < n)%nat -> y l < y (S l)) ->
  forall k l, (S l < n)%nat -> y (S l) - y l <= yiter n h y k (S l) - yiter n h y k l.
Proof.
  intros n h y Hh Hord k l Hl. apply yiter_gap; [lia | exact Hh | left; apply Hord, Hl].
Qed.

(** ** The rate: doubly exponential in k *)
Theorem boolean_limit_rate : forall (n : nat) (h A : R) (y : nat -> R),
  (2 <= n)%nat -> 0 <= h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  (forall i, (S i < n)%nat -> y i < y (S i)) ->
  forall i j k, (i < n)%nat -> (j < n)%nat ->
    (A < y i ->
       Rabs (yattn n (yiter n h y k) i j - (if Nat.eqb j (n - 1) then 1 else 0))
       <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * y i * (y (n - 1)%nat - y (n - 2)%nat)))) /\
    (y i < - A ->
       Rabs (yattn n (yiter n h y k) i j - (if Nat.eqb j 0 then 1 else 0))
       <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * (- y i) * (y 1%nat - y 0%nat)))).
Proof.
  intros n h A y Hn Hh HA Hthr Hord i j k Hi Hj.
  set (x := yiter n h y k).
  assert (Hordk : forall l, (S l < n)%nat -> x l < x (S l)).
  { intros l Hl. pose proof (yiter_ordered n h y Hh Hord k l Hl). pose proof (Hord l Hl).
    unfold x. lra. }
  assert (Hp : 1 <= (1 + h / 2) ^ k) by (apply pow_R1_Rle; lra).
  assert (HINR : 1 <= INR n) by (apply (le_INR 1); lia).
  split; intros Hy.
  - pose proof (yiter_up n h A y i Hi Hh HA Hthr Hy k) as Hup. fold x in Hup.
    pose proof (yiter_ordered n h y Hh Hord k (n - 2) ltac:(lia)) as Hg.
    replace (S (n - 2)) with (n - 1)%nat in Hg by lia. fold x in Hg.
    pose proof (Hord (n - 2)%nat ltac:(lia)) as Hg0.
    replace (S (n - 2)) with (n - 1)%nat in Hg0 by lia.
    pose proof (row_dist n x i (n - 1) j ltac:(lia) ltac:(lia) Hj).
    pose proof (row_top n x i Hn Hordk Hi ltac:(nra)).
    assert (exp (- x i * (x (n - 1)%nat - x (n - 2)%nat))
            <= exp (- ((1 + h / 2) ^ k * y i * (y (n - 1)%nat - y (n - 2)%nat)))).
    { apply exp_le_compat.
      assert (0 <= (x i - (1 + h / 2) ^ k * y i) * (y (n - 1)%nat - y (n - 2)%nat))
        by (apply Rmult_le_pos; lra).
      assert (0 <= x i * ((x (n - 1)%nat - x (n - 2)%nat) - (y (n - 1)%nat - y (n - 2)%nat)))
        by (apply Rmult_le_pos; nra).
      nra. }
    assert (0 <= INR n - 1) by lra.
    assert ((INR n - 1) * exp (- x i * (x (n - 1)%nat - x (n - 2)%nat))
            <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * y i * (y (n - 1)%nat - y (n - 2)%nat))))
      by (apply Rmult_le_compat_l; lra).
    lra.
  - pose proof (yiter_down n h A y i Hi Hh HA Hthr Hy k) as Hdn. fold x in Hdn.
    pose proof (yiter_ordered n h y Hh Hord k 0 ltac:(lia)) as Hg. fold x in Hg.
    pose proof (Hord 0%nat ltac:(lia)) as Hg0.
    pose proof (row_dist n x i 0 j ltac:(lia) ltac:(lia) Hj).
    assert (Hxi : x i < 0) by nra.
    pose proof (row_bottom n x i Hn Hordk Hi Hxi).
    assert (exp (x i * (x 1%nat - x 0%nat))
            <= exp (- ((1 + h / 2) ^ k * (- y i) * (y 1%nat - y 0%nat)))).
    { apply exp_le_compat.
      assert (0 <= ((1 + h / 2) ^ k * y i - x i) * (y 1%nat - y 0%nat))
        by (apply Rmult_le_pos; lra).
      assert (0 <= (- x i) * ((x 1%nat - x 0%nat) - (y 1%nat - y 0%nat)))
        by (apply Rmult_le_pos; lra).
      nra. }
    assert (0 <= INR n - 1) by lra.
    assert ((INR n - 1) * exp (x i * (x 1%nat - x 0%nat))
            <= (INR n - 1) * exp (- ((1 + h / 2) ^ k * (- y i) * (y 1%nat - y 0%nat))))
      by (apply Rmult_le_compat_l; lra).
    lra.
Qed.

(** ** Convergence, and the structure of the limit (l:onlyone, t:boolean) *)
Lemma doubly_exp_to_zero : forall C q c, 0 <= C -> 1 < q -> 0 < c ->
  forall eps, 0 < eps -> exists N, forall k, (N <= k)%nat -> C * exp (- (q ^ k * c)) < eps.
Proof.
  intros C q c HC Hq Hc eps He.
  destruct (Pow_x_infinity q ltac:(rewrite Rabs_right; lra) (C / (eps * c) + 1)) as [N HN].
  exists N. intros k Hk. specialize (HN k Hk).
  assert (Hqk : 0 < q ^ k) by (apply pow_lt; lra).
  rewrite Rabs_right in HN by lra.
  set (x := q ^ k * c).
  assert (Hx : C / eps < x).
  { unfold x. apply Rlt_le_trans with ((C / (eps * c) + 1) * c); [|apply Rmult_le_compat_r; lra].
    replace ((C / (eps * c) + 1) * c) with (C / eps + c) by (field; lra). lra. }
  assert (HCx : C < eps * x).
  { apply Rmult_lt_compat_l with (r := eps) in Hx; [|lra].
    replace (eps * (C / eps)) with C in Hx by (field; lra). exact Hx. }
  pose proof (exp_ineq1_le x). pose proof (exp_pos x).
  assert (0 <= C / eps) by (apply Rmult_le_pos; [lra | left; apply Rinv_0_lt_compat; lra]).
  rewrite exp_Ropp. assert (0 <= x) by lra.
  apply Rmult_lt_reg_r with (exp x); [lra|].
  replace (C * / exp x * exp x) with C by (field; lra).
  nra.
Qed.

Lemma rate_cv : forall (u : nat -> R) l C q c, 0 <= C -> 1 < q -> 0 < c ->
  (forall k, Rabs (u k - l) <= C * exp (- (q ^ k * c))) -> Un_cv u l.
Proof.
  intros u l C q c HC Hq Hc Hb eps He.
  destruct (doubly_exp_to_zero C q c HC Hq Hc eps He) as [N HN].
  exists N. intros k Hk. unfold R_dist. specialize (HN k Hk). specialize (Hb k). lra.
Qed.

Theorem boolean_limit_rows : forall (n : nat) (h A : R) (y : nat -> R),
  (2 <= n)%nat -> 0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  (forall i, (S i < n)%nat -> y i < y (S i)) ->
  forall i j, (i < n)%nat -> (j < n)%nat ->
    (A < y i -> Un_cv (fun k => yattn n (yiter n h y k) i j) (if Nat.eqb j (n - 1) then 1 else 0)) /\
    (y i < - A -> Un_cv (fun k => yattn n (yiter n h y k) i j) (if Nat.eqb j 0 then 1 else 0)).
Proof.
  intros n h A y Hn Hh HA Hthr Hord i j Hi Hj.
  assert (HINR : 1 <= INR n) by (apply (le_INR 1); lia).
  split; intros Hy.
  - pose proof (Hord (n - 2)%nat ltac:(lia)) as Hg. replace (S (n - 2)) with (n - 1)%nat in Hg by lia.
    apply rate_cv with (C := INR n - 1) (q := 1 + h / 2) (c := y i * (y (n - 1)%nat - y (n - 2)%nat));
      [lra | lra | apply Rmult_lt_0_compat; lra |].
    intros k. destruct (boolean_limit_rate n h A y Hn ltac:(lra) HA Hthr Hord i j k Hi Hj) as [H _].
    rewrite Rmult_assoc in H. apply H, Hy.
  - pose proof (Hord 0%nat ltac:(lia)) as Hg.
    apply rate_cv with (C := INR n - 1) (q := 1 + h / 2) (c := - y i * (y 1%nat - y 0%nat));
      [lra | lra | apply Rmult_lt_0_compat; lra |].
    intros k. destruct (boolean_limit_rate n h A y Hn ltac:(lra) HA Hthr Hord i j k Hi Hj) as [_ H].
    rewrite Rmult_assoc in H. apply H, Hy.
Qed.

Lemma ordered_index : forall n (y : nat -> R), (forall i, (S i < n)%nat -> y i < y (S i)) ->
  forall i l, (i < n)%nat -> (l < n)%nat -> y i < y l -> (i < l)%nat.
Proof.
  intros n y Hord i l Hi Hl H. destruct (Nat.lt_ge_cases i l) as [|Hge]; [assumption|].
  pose proof (ordered_le n y Hord l i Hge Hi). lra.
Qed.

Theorem boolean_limit_structure : forall (n : nat) (h A : R) (y : nat -> R) (m : nat)
  (Pstar : nat -> nat -> R),
  (2 <= n)%nat -> 0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  (forall i, (S i < n)%nat -> y i < y (S i)) ->
  (forall i, (i < n)%nat -> i <> m -> y i < - A \/ A < y i) ->
  (forall i j, (i < n)%nat -> (j < n)%nat -> Un_cv (fun k => yattn n (yiter n h y k) i j) (Pstar i j)) ->
  (forall i j, (i < n)%nat -> (j < n)%nat -> y i < - A -> Pstar i j = if Nat.eqb j 0 then 1 else 0) /\
  (forall i j, (i < n)%nat -> (j < n)%nat -> A < y i -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) /\
  (forall i, (i < n)%nat ->
     (forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j 0 then 1 else 0) \/
     (forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) \/
     (forall j, (j < n)%nat -> Pstar i j = Pstar m j)) /\
  (forall i j, (i < n)%nat -> (j < n)%nat -> i <> m -> j <> 0%nat -> j <> (n - 1)%nat ->
     Pstar i j = 0) /\
  (forall i l, (i < n)%nat -> (l < n)%nat -> y i < - A -> - A <= y l -> (i < l)%nat) /\
  (forall i l, (i < n)%nat -> (l < n)%nat -> y i <= A -> A < y l -> (i < l)%nat).
Proof.
  intros n h A y m Pstar Hn Hh HA Hthr Hord Hmid Hcv.
  assert (Hdown : forall i j, (i < n)%nat -> (j < n)%nat -> y i < - A ->
            Pstar i j = if Nat.eqb j 0 then 1 else 0).
  { intros i j Hi Hj Hy. apply UL_sequence with (fun k => yattn n (yiter n h y k) i j); [apply Hcv; assumption|].
    apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj), Hy. }
  assert (Hup : forall i j, (i < n)%nat -> (j < n)%nat -> A < y i ->
            Pstar i j = if Nat.eqb j (n - 1) then 1 else 0).
  { intros i j Hi Hj Hy. apply UL_sequence with (fun k => yattn n (yiter n h y k) i j); [apply Hcv; assumption|].
    apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj), Hy. }
  split; [exact Hdown|]. split; [exact Hup|]. split; [|split; [|split]].
  - intros i Hi. destruct (Nat.eq_dec i m) as [->|Him].
    + right; right. intros j _. reflexivity.
    + destruct (Hmid i Hi Him) as [Hy|Hy].
      * left. intros j Hj. apply Hdown; assumption.
      * right; left. intros j Hj. apply Hup; assumption.
  - intros i j Hi Hj Him Hj0 Hjn. destruct (Hmid i Hi Him) as [Hy|Hy].
    + rewrite (Hdown i j Hi Hj Hy). destruct (Nat.eqb_spec j 0); [lia | reflexivity].
    + rewrite (Hup i j Hi Hj Hy). destruct (Nat.eqb_spec j (n - 1)); [lia | reflexivity].
  - intros i l Hi Hl Hyi Hyl. apply (ordered_index n y Hord); [assumption | assumption | lra].
  - intros i l Hi Hl Hyi Hyl. apply (ordered_index n y Hord); [assumption | assumption | lra].
Qed.

(** Every token outside [−A, A]: P^k converges, to rows e_1 and e_n only. *)
Theorem boolean_limit_escaped : forall (n : nat) (h A : R) (y : nat -> R),
  (2 <= n)%nat -> 0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  (forall i, (S i < n)%nat -> y i < y (S i)) ->
  (forall i, (i < n)%nat -> y i < - A \/ A < y i) ->
  exists Pstar : nat -> nat -> R,
    (forall i j, (i < n)%nat -> (j < n)%nat -> Un_cv (fun k => yattn n (yiter n h y k) i j) (Pstar i j)) /\
    (forall i, (i < n)%nat ->
       (y i < - A /\ forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j 0 then 1 else 0) \/
       (A < y i /\ forall j, (j < n)%nat -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0)).
Proof.
  intros n h A y Hn Hh HA Hthr Hord Hall.
  exists (fun i j => if Rlt_dec (y i) 0 then (if Nat.eqb j 0 then 1 else 0)
                     else (if Nat.eqb j (n - 1) then 1 else 0)).
  split.
  - intros i j Hi Hj. destruct (Rlt_dec (y i) 0) as [Hneg|Hpos].
    + apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj).
      destruct (Hall i Hi); lra.
    + apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj).
      destruct (Hall i Hi); lra.
  - intros i Hi. destruct (Hall i Hi) as [Hy|Hy]; [left | right]; (split; [exact Hy|]);
      intros j Hj; destruct (Rlt_dec (y i) 0); (reflexivity || lra).
Qed.

(** ** The symmetric witness (S): the map commutes with y ↦ −reverse(y) *)
Lemma bsum_mirror : forall n (y : nat -> R) (F : R -> R),
  (forall j, (j < n)%nat -> y (n - 1 - j)%nat = - y j) ->
  bsum n (fun l => F (y l)) = bsum n (fun l => F (- y l)).
Proof.
  intros n y F Hs. rewrite <- (bsum_rev n (fun l => F (y l))).
  apply bsum_ext. intros l Hl. rewrite Hs by lia. reflexivity.
Qed.

Lemma ymean_mirror : forall n y s, (forall j, (j < n)%nat -> y (n - 1 - j)%nat = - y j) ->
  ymean n y (- s) = - ymean n y s.
Proof.
  intros n y s Hs. rewrite <- (ymean_neg n y s). unfold ymean, ypart.
  rewrite (bsum_mirror n y (fun v => exp (- s * v) * v) Hs).
  rewrite (bsum_mirror n y (fun v => exp (- s * v)) Hs).
  reflexivity.
Qed.

Lemma yiter_mirror : forall n h y, (forall j, (j < n)%nat -> y (n - 1 - j)%nat = - y j) ->
  forall k j, (j < n)%nat -> yiter n h y k (n - 1 - j)%nat = - yiter n h y k j.
Proof.
  intros n h y Hs k. induction k as [|k IH]; intros j Hj; [apply Hs, Hj|].
  rewrite !yiter_S, !ystep_ymean. rewrite (IH j Hj), (ymean_mirror n _ _ IH). ring.
Qed.

Lemma ordered_lt : forall n (y : nat -> R), (forall i, (S i < n)%nat -> y i < y (S i)) ->
  forall i l, (i < l)%nat -> (l < n)%nat -> y i < y l.
Proof.
  intros n y Hord i l Hil Hl. pose proof (Hord i ltac:(lia)).
  pose proof (ordered_le n y Hord (S i) l ltac:(lia) Hl). lra.
Qed.

Theorem boolean_limit_symmetric : forall (n c : nat) (h A : R) (y : nat -> R),
  n = (2 * c + 1)%nat -> (1 <= c)%nat ->
  0 < h -> 0 < A -> 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1) ->
  (forall i, (S i < n)%nat -> y i < y (S i)) ->
  (forall j, (j < n)%nat -> y (n - 1 - j)%nat = - y j) ->
  (forall i, (i < n)%nat -> i <> c -> y i < - A \/ A < y i) ->
  (forall k, yiter n h y k c = 0 /\ forall j, (j < n)%nat -> yattn n (yiter n h y k) c j = / INR n) /\
  (forall i j, (i < n)%nat -> (j < n)%nat ->
     Un_cv (fun k => yattn n (yiter n h y k) i j)
       (if Nat.ltb i c then (if Nat.eqb j 0 then 1 else 0)
        else if Nat.eqb i c then / INR n
        else (if Nat.eqb j (n - 1) then 1 else 0))).
Proof.
  intros n c h A y Hnc Hc Hh HA Hthr Hord Hs Hmid.
  assert (Hn : (2 <= n)%nat) by lia.
  assert (Hn0 : (0 < n)%nat) by lia.
  assert (Hmiddle : forall k, yiter n h y k c = 0 /\
            forall j, (j < n)%nat -> yattn n (yiter n h y k) c j = / INR n).
  { intros k. pose proof (yiter_mirror n h y Hs k c ltac:(lia)) as H.
    replace (n - 1 - c)%nat with c in H by lia.
    assert (H0 : yiter n h y k c = 0) by lra. split; [exact H0|].
    intros j Hj. unfold yattn, ypart. rewrite H0.
    replace (bsum n (fun l => exp (0 * yiter n h y k l))) with (bsum n (fun _ => 1)).
    2:{ apply bsum_ext. intros l _. rewrite Rmult_0_l, exp_0. reflexivity. }
    rewrite bsum_const, Rmult_0_l, exp_0.
    assert (0 < INR n) by (apply lt_0_INR; lia). field. lra. }
  split; [exact Hmiddle|].
  assert (Hyc : y c = 0) by (destruct (Hmiddle O) as [H _]; exact H).
  intros i j Hi Hj.
  destruct (Nat.ltb_spec i c) as [Hic|Hci].
  - assert (y i < y c) by (apply (ordered_lt n y Hord); lia).
    apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj).
    destruct (Hmid i Hi ltac:(lia)); lra.
  - destruct (Nat.eqb_spec i c) as [->|Hne].
    + intros eps He. exists O. intros k _. unfold R_dist.
      rewrite (proj2 (Hmiddle k) j Hj). rewrite Rminus_diag_eq, Rabs_R0; [exact He | reflexivity].
    + assert (y c < y i) by (apply (ordered_lt n y Hord); lia).
      apply (boolean_limit_rows n h A y Hn Hh HA Hthr Hord i j Hi Hj).
      destruct (Hmid i Hi Hne); lra.
Qed.

(** The three limit rows of the symmetric case, e_1, (1/n, …, 1/n) and e_n, are
    linearly independent for n ≥ 3: rank P* = 3, the bound is attained. *)
Lemma symmetric_limit_rank3 : forall n a b d, (3 <= n)%nat ->
  (forall j, (j < n)%nat ->
     a * (if Nat.eqb j 0 then 1 else 0) + b * (if Nat.eqb j (n - 1) then 1 else 0) + d * / INR n = 0) ->
  a = 0 /\ b = 0 /\ d = 0.
Proof.
  intros n a b d Hn H.
  assert (HINR : 0 < INR n) by (apply lt_0_INR; lia).
  pose proof (H 1%nat ltac:(lia)) as H1.
  rewrite (proj2 (Nat.eqb_neq 1 (n - 1))), (proj2 (Nat.eqb_neq 1 0)) in H1 by lia.
  assert (Hd : d = 0).
  { assert (d * / INR n = 0) by lra.
    apply Rmult_integral in H0. destruct H0 as [|H0]; [assumption|].
    exfalso. apply (Rinv_neq_0_compat (INR n)); lra. }
  subst d. pose proof (H 0%nat ltac:(lia)) as H0.
  rewrite (proj2 (Nat.eqb_neq 0 (n - 1))), Nat.eqb_refl in H0 by lia.
  pose proof (H (n - 1)%nat ltac:(lia)) as Hl. rewrite Nat.eqb_refl in Hl.
  rewrite (proj2 (Nat.eqb_neq (n - 1) 0)) in Hl by lia.
  lra.
Qed.

(** ** The map as the library defines it (coq/Attncheck.v, [layer_stepR]) *)

(** The scalar layer x_i ↦ x_i + Δt v Σ_j softmax_j(q k x_i x_j) x_j, on functions. *)
Definition xstep (n : nat) (dt q kk v : R) (x : nat -> R) (i : nat) : R :=
  x i + dt * (v * bsum n (fun j => exp (q * kk * x i * x j) / bsum n (fun l => exp (q * kk * x i * x l)) * x j)).

Lemma sumR_bsum : forall (g : R -> R) xs, sumR (map g xs) = bsum (length xs) (fun j => g (nth j xs 0)).
Proof. intros g xs. induction xs as [|b xs IH]; [reflexivity|]. simpl. rewrite IH. reflexivity. Qed.

Lemma wsumR_col : forall (f : R -> R) xs, xs <> [] ->
  wsumR (map f xs) (map (fun b => [b]) xs) = [sumR (map (fun b => f b * b) xs)].
Proof.
  intros f xs Hne. induction xs as [|b xs IH]; [congruence|].
  destruct xs as [|b' xs].
  - simpl. unfold vscaleR. simpl. rewrite Rplus_0_r. reflexivity.
  - transitivity (vaddR (vscaleR (f b) [b]) (wsumR (map f (b' :: xs)) (map (fun b0 => [b0]) (b' :: xs))));
      [reflexivity|].
    rewrite IH by discriminate. reflexivity.
Qed.

Lemma map_seq_nth : forall {B : Type} (F : R -> B) xs,
  map F xs = map (fun i => F (nth i xs 0)) (seq 0 (length xs)).
Proof.
  intros B F xs. induction xs as [|b xs IH]; [reflexivity|].
  simpl. rewrite <- seq_shift, map_map. simpl. f_equal. exact IH.
Qed.

Lemma logitR_scalar : forall q kk a b, logitR [[q]] [[kk]] [a] [b] = q * kk * a * b.
Proof. intros. unfold logitR, mvR, dotR. simpl. ring. Qed.

Theorem layer_stepR_scalar : forall (q kk v dt : R) (xs : list R), xs <> [] ->
  layer_stepR [[q]] [[kk]] [[v]] dt (map (fun b => [b]) xs)
  = map (fun i => [xstep (length xs) dt q kk v (fun j => nth j xs 0) i]) (seq 0 (length xs)).
Proof.
  intros q kk v dt xs Hne. unfold layer_stepR. rewrite map_map, map_seq_nth.
  apply map_ext. intros i. set (b := nth i xs 0).
  rewrite map_map.
  replace (map (fun x => logitR [[q]] [[kk]] [b] [x]) xs) with (map (fun c => q * kk * b * c) xs)
    by (apply map_ext; intros c; rewrite logitR_scalar; reflexivity).
  unfold softmaxR. cbv zeta. rewrite !map_map.
  rewrite (wsumR_col (fun c => exp (q * kk * b * c) / sumR (map (fun c => exp (q * kk * b * c)) xs)) xs Hne).
  rewrite !sumR_bsum. unfold xstep. fold b.
  unfold mvR, vscaleR, vaddR, dotR. simpl. f_equal. f_equal. ring.
Qed.

Definition yvals (n : nat) (x : nat -> R) : list R := map x (seq 0 n).

Lemma nth_tolist : forall n x j, (j < n)%nat -> nth j (yvals n x) 0 = x j.
Proof.
  intros n x j Hj. unfold yvals.
  rewrite nth_indep with (d' := x 0%nat) by (rewrite map_length, seq_length; lia).
  rewrite map_nth, seq_nth by lia. reflexivity.
Qed.

Lemma tolist_length : forall n x, length (yvals n x) = n.
Proof. intros. unfold yvals. rewrite map_length, seq_length. reflexivity. Qed.

Lemma xstep_ext : forall n dt q kk v x x' i, (forall j, (j < n)%nat -> x j = x' j) -> (i < n)%nat ->
  xstep n dt q kk v x i = xstep n dt q kk v x' i.
Proof.
  intros n dt q kk v x x' i H Hi. unfold xstep. rewrite (H i Hi). do 3 f_equal.
  apply bsum_ext. intros j Hj. rewrite (H j Hj). f_equal. f_equal.
  apply bsum_ext. intros l Hl. rewrite (H l Hl). reflexivity.
Qed.

Theorem layer_iter_scalar : forall (q kk v dt : R) (n : nat) (x : nat -> R) (k : nat), (0 < n)%nat ->
  Nat.iter k (layer_stepR [[q]] [[kk]] [[v]] dt) (map (fun b => [b]) (yvals n x))
  = map (fun b => [b]) (yvals n (Nat.iter k (xstep n dt q kk v) x)).
Proof.
  intros q kk v dt n x k Hn. induction k as [|k IH]; [reflexivity|].
  simpl Nat.iter. rewrite IH. set (g := Nat.iter k (xstep n dt q kk v) x).
  rewrite layer_stepR_scalar.
  2:{ intros E. apply (f_equal (@length R)) in E. rewrite tolist_length in E. simpl in E. lia. }
  rewrite tolist_length. unfold yvals at 2. rewrite map_map.
  apply map_ext_in. intros i Hi. apply in_seq in Hi. cbv beta. f_equal.
  apply xstep_ext; [intros j Hj; apply nth_tolist, Hj | lia].
Qed.

Lemma ystep_ext : forall n h y y' i, (forall j, y j = y' j) -> ystep n h y i = ystep n h y' i.
Proof.
  intros n h y y' i H. unfold ystep, yattn, ypart. rewrite (H i). do 2 f_equal.
  apply bsum_ext. intros j _. rewrite (H j). do 2 f_equal.
  apply bsum_ext. intros l _. rewrite (H l). reflexivity.
Qed.

Lemma yiter_ext : forall n h y y', (forall j, y j = y' j) -> forall k j, yiter n h y k j = yiter n h y' k j.
Proof.
  intros n h y y' H k. induction k as [|k IH]; intros j; [apply H|].
  rewrite !yiter_S. apply ystep_ext, IH.
Qed.

(** The rescaling e:Idnonresca on the discrete map, exactly: y = a x with a² = q k turns the
    scalar layer (q, k, v, Δt) into the map with h = Δt v. *)
Lemma xstep_scale : forall n dt q kk v a x i, a * a = q * kk ->
  a * xstep n dt q kk v x i = ystep n (dt * v) (fun j => a * x j) i.
Proof.
  intros n dt q kk v a x i Ha. unfold xstep, ystep, yattn, ypart.
  replace (bsum n (fun l => exp (a * x i * (a * x l)))) with (bsum n (fun l => exp (q * kk * x i * x l)))
    by (apply bsum_ext; intros l _; f_equal; replace (a * x i * (a * x l)) with (a * a * x i * x l) by ring;
        rewrite Ha; ring).
  replace (bsum n (fun j => exp (a * x i * (a * x j)) / bsum n (fun l => exp (q * kk * x i * x l)) * (a * x j)))
    with (a * bsum n (fun j => exp (q * kk * x i * x j) / bsum n (fun l => exp (q * kk * x i * x l)) * x j)).
  - ring.
  - rewrite <- bsum_scal. apply bsum_ext. intros j _.
    replace (a * x i * (a * x j)) with (q * kk * x i * x j)
      by (replace (a * x i * (a * x j)) with (a * a * x i * x j) by ring; rewrite Ha; ring).
    unfold Rdiv. ring.
Qed.

Lemma xiter_scale : forall n dt q kk v a x, a * a = q * kk ->
  forall k j, a * Nat.iter k (xstep n dt q kk v) x j = yiter n (dt * v) (fun j => a * x j) k j.
Proof.
  intros n dt q kk v a x Ha k. induction k as [|k IH]; intros j; [reflexivity|].
  simpl Nat.iter. rewrite xstep_scale by exact Ha. rewrite yiter_S. apply ystep_ext, IH.
Qed.

(** The bridge used for a concrete trace: the library's layer map, iterated with Q = K = V = 1
    and Δt = h on n tokens y, is this file's [yiter]. *)
Theorem layer_iter_unit : forall (h : R) (n : nat) (y : nat -> R) (k : nat), (0 < n)%nat ->
  Nat.iter k (layer_stepR [[1]] [[1]] [[1]] h) (map (fun b => [b]) (yvals n y))
  = map (fun b => [b]) (yvals n (yiter n h y k)).
Proof.
  intros h n y k Hn. rewrite layer_iter_scalar by exact Hn. unfold yvals. rewrite !map_map.
  apply map_ext. intros j. f_equal.
  rewrite <- (Rmult_1_l (Nat.iter k (xstep n h 1 1 1) y j)).
  rewrite xiter_scale by ring. replace (h * 1) with h by ring.
  apply yiter_ext. intros l. ring.
Qed.

(** And the scalar system of the claim (Q, K ∈ ℝ^{1×1}, V = v, a = √(QK)): the layer's
    iterates, multiplied by a, are the map's with h = Δt v from a x^0. *)
Theorem layer_iter_rescaled : forall (q kk v dt a : R) (n : nat) (x : nat -> R) (k : nat),
  (0 < n)%nat -> a * a = q * kk ->
  map (map (fun b => a * b)) (Nat.iter k (layer_stepR [[q]] [[kk]] [[v]] dt) (map (fun b => [b]) (yvals n x)))
  = map (fun b => [b]) (yvals n (yiter n (dt * v) (fun j => a * x j) k)).
Proof.
  intros q kk v dt a n x k Hn Ha. rewrite layer_iter_scalar by exact Hn. unfold yvals. rewrite !map_map.
  apply map_ext. intros j. simpl. f_equal. apply xiter_scale, Ha.
Qed.

(** A closed form of a threshold: A = √(2 ln n) satisfies the threshold condition for n ≥ 2
    (the least A is √(2 W((n − 1)/e)); see the header). *)
Lemma threshold_sqrt_2ln : forall n, (2 <= n)%nat ->
  0 < sqrt (2 * ln (INR n)) /\
  2 * (INR n - 1) <= sqrt (2 * ln (INR n)) ^ 2 * exp (sqrt (2 * ln (INR n)) ^ 2 / 2 + 1).
Proof.
  intros n Hn.
  assert (H2 : 2 <= INR n) by (apply (le_INR 2); lia).
  assert (Hln : / 2 < ln (INR n)).
  { apply Rlt_le_trans with (ln 2); [exact ln_lt_2|].
    destruct H2 as [H2|H2]; [left; apply ln_increasing; lra | rewrite H2; right; reflexivity]. }
  assert (Hsq : sqrt (2 * ln (INR n)) ^ 2 = 2 * ln (INR n)).
  { simpl. rewrite Rmult_1_r. apply sqrt_sqrt. lra. }
  split; [apply sqrt_lt_R0; lra|].
  rewrite Hsq. replace (2 * ln (INR n) / 2 + 1) with (ln (INR n) + 1) by field.
  rewrite exp_plus, exp_ln by lra.
  pose proof (exp_ineq1_le 1) as He.
  assert (Hl : INR n / 2 <= ln (INR n) * INR n) by nra.
  assert (INR n / 2 * exp 1 <= ln (INR n) * INR n * exp 1) by (apply Rmult_le_compat_r; lra).
  nra.
Qed.

Lemma yiter_plus : forall n h y K k, yiter n h y (k + K) = yiter n h (yiter n h y K) k.
Proof.
  intros n h y K k. induction k as [|k IH]; [reflexivity|].
  simpl plus. rewrite !yiter_S, IH. reflexivity.
Qed.

(** ** What is proven, and on what

    One [Print Assumptions] for all the theorems (each print walks the whole
    standard reals, about 0.7 s): their union must be the standard reals' axioms. *)
Definition boolean_limit_lemmas :=
  (order_and_gaps, boolean_limit_rate, boolean_limit_rows, boolean_limit_structure,
   boolean_limit_escaped, boolean_limit_symmetric, symmetric_limit_rank3,
   threshold_sqrt_2ln, yiter_plus, layer_iter_unit, layer_iter_rescaled).
Print Assumptions boolean_limit_lemmas.
