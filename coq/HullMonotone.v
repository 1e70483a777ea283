(** * The hull is nonincreasing, for the discrete map (clusters/polytope `p:noninc`,
    clusters/paranormal, clusters/hyperplanes `l:fj`; issue 39, "Beyond").

    The map the three claims run (src/dynamics/discrete.rs, [Form::LayerRescaled]):
    n tokens x_i ∈ ℝ^d (indices from 0), M = QᵀK, step h = Δt ≥ 0,

      x_i^{k+1} = x_i^k + h V Σ_j P_ij^k x_j^k,
      P_ij^k = e^{x_i^kᵀ M x_j^k} / Σ_l e^{x_i^kᵀ M x_l^k}        ([lstep], [attn], [liter]),

    and the rescaled tokens z^k with R^k z_i^k = x_i^k, R = I + hV ([rescaled]: the code
    forms z^k = R^{−k} x^k, R invertible, checked exactly).  M is arbitrary here (only
    P ≥ 0 with rows summing to 1 is used, [attn_stochastic]).

    Core lemma ([convex_step_max_min]): if every new value is a convex combination
    (weights ≥ 0 summing to 1) of the old values, the max is nonincreasing and the min
    nondecreasing.  The map gives that form for any linear functional φ with φV = λφ,
    λ ≥ 0 ([functional_step]):

      φ(z_i^{k+1}) = (φ(z_i^k) + hλ Σ_j P_ij^k φ(z_j^k)) / (1 + hλ)   ([relax], c = hλ),

    a convex combination with weights (δ_ij + hλ P_ij)/(1 + hλ) ([relax_convex]).  Hence,
    for every instance, every h ≥ 0 and every step k:
    - [functional_max_min], [functional_antitone]: max_i φ(z_i^k) is nonincreasing and
      min_i φ(z_i^k) nondecreasing in k, for every left eigenvector φ of V with eigenvalue
      λ ≥ 0 (clusters/hyperplanes, `l:fj`: φ = φ1*, λ = λ1 > 0);
    - [coordinate_max_min]: for a coordinate c whose row of V is λ e_cᵀ (λ ≥ 0), max_i and
      min_i of z_{i,c}^k are monotone (clusters/paranormal: V diagonal, c spans ℱ, λ the
      eigenvalue on ℱ; the π_ℱ-hull);
    - [support_max_min]: for V = I, the support function max_i ⟨u, z_i^k⟩ is nonincreasing
      for every direction u, and min_i ⟨u, z_i^k⟩ nondecreasing (clusters/polytope,
      `p:noninc`); [hull_step]: each z_i^{k+1} is a convex combination of the z_j^k, so
      Cx{z^{k+1}} ⊆ Cx{z^k}.

    Without λ ≥ 0 it is false (n = 2, d = 1, V = −1/2, h = 1, M = 0, z = (0, 1): the new
    z_1 is 2·1 − 1/2 = 3/2 > 1).

    Not covered: the limits (𝒦, a, b, the clusters); the flow; the link to the library's
    list-based [layer_stepR] (coq/Attncheck.v) for d > 1 ([lstep] transcribes the layer
    of src/dynamics/discrete.rs; coq/BooleanLimit.v links the scalar case).

    Checked by [make coq] and the test [coq_hull::the_hull_monotone_lemma_is_proven_in_coq];
    [Print Assumptions] at the end must list only the axioms of Coq's standard reals. *)

From Coq Require Import Reals Lra Lia.
Local Open Scope R_scope.

(** ** Finite sums: [hsum n f] = Σ_{j<n} f j *)

Fixpoint hsum (n : nat) (f : nat -> R) : R :=
  match n with O => 0 | S n' => hsum n' f + f n' end.

Lemma hsum_ext : forall n f g, (forall j, (j < n)%nat -> f j = g j) -> hsum n f = hsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [reflexivity|].
  rewrite (IH f g) by (intros j Hj; apply H; lia). rewrite (H n) by lia. reflexivity.
Qed.

Lemma hsum_le : forall n f g, (forall j, (j < n)%nat -> f j <= g j) -> hsum n f <= hsum n g.
Proof.
  induction n as [|n IH]; intros f g H; simpl; [lra|].
  apply Rplus_le_compat; [apply IH; intros j Hj; apply H; lia | apply H; lia].
Qed.

Lemma hsum_plus : forall n f g, hsum n (fun j => f j + g j) = hsum n f + hsum n g.
Proof. induction n as [|n IH]; intros f g; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma hsum_scal : forall n c f, hsum n (fun j => c * f j) = c * hsum n f.
Proof. induction n as [|n IH]; intros c f; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma hsum_scal_r : forall n c f, hsum n (fun j => f j * c) = hsum n f * c.
Proof. induction n as [|n IH]; intros c f; simpl; [ring|]. rewrite IH. ring. Qed.

Lemma hsum_zero : forall n, hsum n (fun _ => 0) = 0.
Proof. induction n as [|n IH]; simpl; [reflexivity|]. rewrite IH. ring. Qed.

Lemma hsum_swap : forall n m f,
  hsum n (fun j => hsum m (fun l => f j l)) = hsum m (fun l => hsum n (fun j => f j l)).
Proof.
  induction n as [|n IH]; intros m f; simpl.
  - rewrite hsum_zero. reflexivity.
  - rewrite IH, <- hsum_plus. reflexivity.
Qed.

Lemma hsum_pos : forall n f, (1 <= n)%nat -> (forall j, (j < n)%nat -> 0 < f j) -> 0 < hsum n f.
Proof.
  induction n as [|n IH]; intros f Hn H; [lia|]. simpl.
  destruct n as [|n'].
  - simpl. specialize (H O ltac:(lia)). lra.
  - assert (0 < hsum (S n') f) by (apply IH; [lia | intros j Hj; apply H; lia]).
    assert (0 < f (S n')) by (apply H; lia). lra.
Qed.

(** The Kronecker delta. *)
Definition eye (a b : nat) : R := if Nat.eqb a b then 1 else 0.

Lemma hsum_eye_out : forall n i f, (n <= i)%nat -> hsum n (fun j => eye i j * f j) = 0.
Proof.
  induction n as [|n IH]; intros i f Hi; simpl; [reflexivity|].
  rewrite IH by lia. unfold eye. destruct (Nat.eqb_spec i n); [lia|]. ring.
Qed.

Lemma hsum_eye : forall n i f, (i < n)%nat -> hsum n (fun j => eye i j * f j) = f i.
Proof.
  induction n as [|n IH]; intros i f Hi; [lia|]. simpl.
  unfold eye at 2. destruct (Nat.eqb_spec i n) as [->|Hne].
  - rewrite hsum_eye_out by lia. ring.
  - rewrite IH by lia. ring.
Qed.

Lemma hsum_eye_l : forall n i f, (i < n)%nat -> hsum n (fun j => f j * eye j i) = f i.
Proof.
  intros n i f Hi. rewrite <- (hsum_eye n i f Hi). apply hsum_ext. intros j Hj.
  unfold eye. rewrite Nat.eqb_sym. ring.
Qed.

(** ** The maximum and minimum of f 0, …, f (n − 1) (n ≥ 1) *)

Fixpoint hmax (m : nat) (f : nat -> R) : R :=
  match m with O => f O | S m' => Rmax (hmax m' f) (f (S m')) end.
Fixpoint hmin (m : nat) (f : nat -> R) : R :=
  match m with O => f O | S m' => Rmin (hmin m' f) (f (S m')) end.
Definition tmax (n : nat) (f : nat -> R) : R := hmax (pred n) f.
Definition tmin (n : nat) (f : nat -> R) : R := hmin (pred n) f.

Lemma hmax_ub : forall m f j, (j <= m)%nat -> f j <= hmax m f.
Proof.
  induction m as [|m IH]; intros f j Hj; simpl.
  - replace j with O by lia. lra.
  - destruct (Nat.eq_dec j (S m)) as [->|Hne]; [apply Rmax_r|].
    eapply Rle_trans; [apply (IH f j); lia | apply Rmax_l].
Qed.

Lemma hmax_lub : forall m f M, (forall j, (j <= m)%nat -> f j <= M) -> hmax m f <= M.
Proof.
  induction m as [|m IH]; intros f M H; simpl; [apply H; lia|].
  apply Rmax_lub; [apply IH; intros j Hj; apply H; lia | apply H; lia].
Qed.

Lemma hmin_lb : forall m f j, (j <= m)%nat -> hmin m f <= f j.
Proof.
  induction m as [|m IH]; intros f j Hj; simpl.
  - replace j with O by lia. lra.
  - destruct (Nat.eq_dec j (S m)) as [->|Hne]; [apply Rmin_r|].
    eapply Rle_trans; [apply Rmin_l | apply (IH f j); lia].
Qed.

Lemma hmin_glb : forall m f M, (forall j, (j <= m)%nat -> M <= f j) -> M <= hmin m f.
Proof.
  induction m as [|m IH]; intros f M H; simpl; [apply H; lia|].
  apply Rmin_glb; [apply IH; intros j Hj; apply H; lia | apply H; lia].
Qed.

(** [tmax n f] is the maximum of f over j < n: an upper bound attained... *)
Lemma tmax_ub : forall n f j, (j < n)%nat -> f j <= tmax n f.
Proof. intros n f j Hj. apply hmax_ub. lia. Qed.
(** ... and below every upper bound. *)
Lemma tmax_lub : forall n f M, (1 <= n)%nat -> (forall j, (j < n)%nat -> f j <= M) -> tmax n f <= M.
Proof. intros n f M Hn H. apply hmax_lub. intros j Hj. apply H. lia. Qed.
Lemma tmin_lb : forall n f j, (j < n)%nat -> tmin n f <= f j.
Proof. intros n f j Hj. apply hmin_lb. lia. Qed.
Lemma tmin_glb : forall n f M, (1 <= n)%nat -> (forall j, (j < n)%nat -> M <= f j) -> M <= tmin n f.
Proof. intros n f M Hn H. apply hmin_glb. intros j Hj. apply H. lia. Qed.

Lemma tmax_ext : forall n f g, (1 <= n)%nat -> (forall j, (j < n)%nat -> f j = g j) -> tmax n f = tmax n g.
Proof.
  intros n f g Hn H. apply Rle_antisym; apply tmax_lub; try exact Hn; intros j Hj.
  - rewrite H by exact Hj. apply tmax_ub, Hj.
  - rewrite <- H by exact Hj. apply tmax_ub, Hj.
Qed.
Lemma tmin_ext : forall n f g, (1 <= n)%nat -> (forall j, (j < n)%nat -> f j = g j) -> tmin n f = tmin n g.
Proof.
  intros n f g Hn H. apply Rle_antisym; apply tmin_glb; try exact Hn; intros j Hj.
  - rewrite <- H by exact Hj. apply tmin_lb, Hj.
  - rewrite H by exact Hj. apply tmin_lb, Hj.
Qed.

(** ** The core lemma: a convex combination does not leave [min, max] *)

Definition convex_weights (n : nat) (w : nat -> nat -> R) : Prop :=
  (forall i j, (i < n)%nat -> (j < n)%nat -> 0 <= w i j) /\
  (forall i, (i < n)%nat -> hsum n (w i) = 1).

Theorem convex_step_bounds : forall (n : nat) (w : nat -> nat -> R) (a b : nat -> R) (m M : R),
  convex_weights n w ->
  (forall i, (i < n)%nat -> b i = hsum n (fun j => w i j * a j)) ->
  (forall j, (j < n)%nat -> m <= a j <= M) ->
  forall i, (i < n)%nat -> m <= b i <= M.
Proof.
  intros n w a b m M [Hw Hs] Hb Ha i Hi. rewrite (Hb i Hi).
  split.
  - replace m with (hsum n (fun j => w i j * m)) by (rewrite hsum_scal_r, (Hs i Hi); ring).
    apply hsum_le. intros j Hj. apply Rmult_le_compat_l; [apply Hw; lia | apply Ha; lia].
  - replace M with (hsum n (fun j => w i j * M)) by (rewrite hsum_scal_r, (Hs i Hi); ring).
    apply hsum_le. intros j Hj. apply Rmult_le_compat_l; [apply Hw; lia | apply Ha; lia].
Qed.

Theorem convex_step_max_min : forall (n : nat) (w : nat -> nat -> R) (a b : nat -> R),
  (1 <= n)%nat -> convex_weights n w ->
  (forall i, (i < n)%nat -> b i = hsum n (fun j => w i j * a j)) ->
  tmax n b <= tmax n a /\ tmin n a <= tmin n b.
Proof.
  intros n w a b Hn Hw Hb.
  assert (H : forall i, (i < n)%nat -> tmin n a <= b i <= tmax n a).
  { apply (convex_step_bounds n w a b); [exact Hw | exact Hb |].
    intros j Hj. split; [apply tmin_lb | apply tmax_ub]; exact Hj. }
  split; [apply tmax_lub | apply tmin_glb]; try exact Hn; intros i Hi; apply H, Hi.
Qed.

(** ** The step the map gives: (a_i + c Σ_j P_ij a_j) / (1 + c), c ≥ 0, P stochastic *)

Definition stochastic (n : nat) (P : nat -> nat -> R) : Prop :=
  (forall i j, (i < n)%nat -> (j < n)%nat -> 0 <= P i j) /\
  (forall i, (i < n)%nat -> hsum n (P i) = 1).

Definition relax (n : nat) (c : R) (P : nat -> nat -> R) (a : nat -> R) (i : nat) : R :=
  (a i + c * hsum n (fun j => P i j * a j)) / (1 + c).

Definition relax_weights (c : R) (P : nat -> nat -> R) (i j : nat) : R :=
  (eye i j + c * P i j) / (1 + c).

Lemma relax_convex : forall n c P, 0 <= c -> stochastic n P -> convex_weights n (relax_weights c P).
Proof.
  intros n c P Hc [Hp Hs]. split.
  - intros i j Hi Hj. unfold relax_weights, eye. apply Rmult_le_pos; [|left; apply Rinv_0_lt_compat; lra].
    assert (0 <= c * P i j) by (apply Rmult_le_pos; [lra | apply Hp; lia]).
    destruct (Nat.eqb i j); lra.
  - intros i Hi. unfold relax_weights, Rdiv. rewrite hsum_scal_r, hsum_plus, hsum_scal, (Hs i Hi).
    replace (hsum n (eye i)) with (hsum n (fun j => eye i j * 1))
      by (apply hsum_ext; intros; ring).
    rewrite hsum_eye by exact Hi. field. lra.
Qed.

Lemma relax_is_convex : forall n c P a i, 0 <= c -> (i < n)%nat ->
  relax n c P a i = hsum n (fun j => relax_weights c P i j * a j).
Proof.
  intros n c P a i Hc Hi. unfold relax, relax_weights, Rdiv.
  replace (hsum n (fun j => (eye i j + c * P i j) * / (1 + c) * a j))
    with (hsum n (fun j => eye i j * a j + c * (P i j * a j)) * / (1 + c))
    by (rewrite <- hsum_scal_r; apply hsum_ext; intros; ring).
  rewrite hsum_plus, hsum_scal, hsum_eye by exact Hi. reflexivity.
Qed.

Theorem relax_max_min : forall (n : nat) (c : R) (P : nat -> nat -> R) (a b : nat -> R),
  (1 <= n)%nat -> 0 <= c -> stochastic n P ->
  (forall i, (i < n)%nat -> b i = relax n c P a i) ->
  tmax n b <= tmax n a /\ tmin n a <= tmin n b.
Proof.
  intros n c P a b Hn Hc HP Hb.
  apply (convex_step_max_min n (relax_weights c P)); [exact Hn | apply relax_convex; assumption |].
  intros i Hi. rewrite (Hb i Hi). apply relax_is_convex; assumption.
Qed.

(** ** The layer, its attention, the rescaled tokens *)

(** (M v)_a = Σ_{b<d} M_ab v_b, and the linear functional φ(v) = Σ_{a<d} φ_a v_a. *)
Definition mv (d : nat) (M : nat -> nat -> R) (v : nat -> R) : nat -> R :=
  fun a => hsum d (fun b => M a b * v b).
Definition fval (d : nat) (phi v : nat -> R) : R := hsum d (fun a => phi a * v a).

(** P_ij = softmax_j x_iᵀ M x_j (row i is the query x_i; M = QᵀK). *)
Definition logit (d : nat) (M : nat -> nat -> R) (x : nat -> nat -> R) (i j : nat) : R :=
  fval d (x i) (mv d M (x j)).
Definition attn (n d : nat) (M : nat -> nat -> R) (x : nat -> nat -> R) (i j : nat) : R :=
  exp (logit d M x i j) / hsum n (fun l => exp (logit d M x i l)).

(** x_i^{k+1} = x_i^k + h V Σ_j P_ij x_j^k. *)
Definition lstep (n d : nat) (M V : nat -> nat -> R) (h : R) (x : nat -> nat -> R) : nat -> nat -> R :=
  fun i a => x i a + h * mv d V (fun b => hsum n (fun j => attn n d M x i j * x j b)) a.
Definition liter (n d : nat) (M V : nat -> nat -> R) (h : R) (x0 : nat -> nat -> R) (k : nat) :=
  Nat.iter k (lstep n d M V h) x0.

(** R = I + hV, R^k v, and the rescaled tokens: R^k z_i^k = x_i^k for all k, i < n. *)
Definition rmat (h : R) (V : nat -> nat -> R) (a b : nat) : R := eye a b + h * V a b.
Definition rpow (d : nat) (h : R) (V : nat -> nat -> R) (k : nat) (v : nat -> R) : nat -> R :=
  Nat.iter k (mv d (rmat h V)) v.
Definition rescaled (n d : nat) (M V : nat -> nat -> R) (h : R) (x0 : nat -> nat -> R)
    (z : nat -> nat -> nat -> R) : Prop :=
  forall k i a, (i < n)%nat -> (a < d)%nat -> rpow d h V k (z k i) a = liter n d M V h x0 k i a.

(** φ V = λ φ (φ a left eigenvector of V, as a row vector). *)
Definition left_eigen (d : nat) (V : nat -> nat -> R) (lam : R) (phi : nat -> R) : Prop :=
  forall b, (b < d)%nat -> hsum d (fun a => phi a * V a b) = lam * phi b.

Theorem attn_stochastic : forall n d M x, (1 <= n)%nat -> stochastic n (attn n d M x).
Proof.
  intros n d M x Hn. split.
  - intros i j Hi Hj. unfold attn. left. apply Rdiv_lt_0_compat; [apply exp_pos|].
    apply hsum_pos; [exact Hn | intros; apply exp_pos].
  - intros i Hi. unfold attn, Rdiv. rewrite hsum_scal_r. apply Rinv_r.
    apply Rgt_not_eq, hsum_pos; [exact Hn | intros; apply exp_pos].
Qed.

Lemma fval_ext : forall d phi v w, (forall a, (a < d)%nat -> v a = w a) -> fval d phi v = fval d phi w.
Proof. intros d phi v w H. apply hsum_ext. intros a Ha. rewrite H by exact Ha. reflexivity. Qed.

Lemma fval_mv : forall d V lam phi v, left_eigen d V lam phi ->
  fval d phi (mv d V v) = lam * fval d phi v.
Proof.
  intros d V lam phi v He. unfold fval, mv.
  transitivity (hsum d (fun a => hsum d (fun b => phi a * V a b * v b))).
  { apply hsum_ext. intros a Ha. rewrite <- hsum_scal. apply hsum_ext. intros; ring. }
  rewrite hsum_swap, <- hsum_scal. apply hsum_ext. intros b Hb.
  rewrite hsum_scal_r, (He b Hb). ring.
Qed.

Lemma fval_rmat : forall d h V lam phi v, left_eigen d V lam phi ->
  fval d phi (mv d (rmat h V) v) = (1 + h * lam) * fval d phi v.
Proof.
  intros d h V lam phi v He.
  rewrite (fval_ext d phi _ (fun a => v a + h * mv d V v a)).
  - unfold fval at 1.
    rewrite (hsum_ext d _ (fun a => phi a * v a + phi a * (h * mv d V v a))) by (intros; ring).
    rewrite hsum_plus.
    replace (hsum d (fun a => phi a * (h * mv d V v a))) with (h * fval d phi (mv d V v))
      by (unfold fval; rewrite <- hsum_scal; apply hsum_ext; intros; ring).
    rewrite (fval_mv d V lam phi v He). unfold fval. ring.
  - intros a Ha. unfold mv at 1, rmat.
    rewrite (hsum_ext d _ (fun b => eye a b * v b + h * (V a b * v b))) by (intros; ring).
    rewrite hsum_plus, hsum_scal, hsum_eye by exact Ha. reflexivity.
Qed.

Lemma fval_rpow : forall d h V lam phi k v, left_eigen d V lam phi ->
  fval d phi (rpow d h V k v) = (1 + h * lam) ^ k * fval d phi v.
Proof.
  intros d h V lam phi k v He. induction k as [|k IH]; simpl; [ring|].
  unfold rpow in *. simpl. rewrite (fval_rmat d h V lam phi _ He), IH. ring.
Qed.

Lemma fval_lstep : forall n d M V h lam phi x i, left_eigen d V lam phi ->
  fval d phi (lstep n d M V h x i) =
  fval d phi (x i) + h * lam * hsum n (fun j => attn n d M x i j * fval d phi (x j)).
Proof.
  intros n d M V h lam phi x i He. unfold lstep, fval at 1.
  set (w := fun b => hsum n (fun j => attn n d M x i j * x j b)).
  rewrite (hsum_ext d _ (fun a => phi a * x i a + phi a * (h * mv d V w a))) by (intros; ring).
  rewrite hsum_plus.
  replace (hsum d (fun a => phi a * (h * mv d V w a))) with (h * fval d phi (mv d V w))
    by (unfold fval; rewrite <- hsum_scal; apply hsum_ext; intros; ring).
  rewrite (fval_mv d V lam phi w He).
  replace (fval d phi w) with (hsum n (fun j => attn n d M x i j * fval d phi (x j))).
  - unfold fval. ring.
  - unfold fval, w. symmetry.
    transitivity (hsum d (fun a => hsum n (fun j => attn n d M x i j * (phi a * x j a)))).
    { apply hsum_ext. intros a Ha. rewrite <- hsum_scal. apply hsum_ext. intros; ring. }
    rewrite hsum_swap. apply hsum_ext. intros j Hj. rewrite <- hsum_scal. reflexivity.
Qed.

(** ** The map, read through φ: the relaxation step with c = hλ *)

Theorem functional_step : forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (phi : nat -> R)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  0 <= h -> 0 <= lam -> left_eigen d V lam phi -> rescaled n d M V h x0 z ->
  forall k i, (i < n)%nat ->
    fval d phi (z (S k) i) =
    relax n (h * lam) (attn n d M (liter n d M V h x0 k)) (fun j => fval d phi (z k j)) i.
Proof.
  intros n d M V h lam phi x0 z Hh Hl He Hz k i Hi.
  set (c := 1 + h * lam).
  assert (Hc : 0 < c) by (unfold c; assert (0 <= h * lam) by (apply Rmult_le_pos; lra); lra).
  (* φ(x_j^k) = c^k φ(z_j^k) *)
  assert (Hx : forall k j, (j < n)%nat -> fval d phi (liter n d M V h x0 k j) = c ^ k * fval d phi (z k j)).
  { intros k' j Hj. unfold c. rewrite <- (fval_rpow d h V lam phi k' (z k' j) He).
    apply fval_ext. intros a Ha. symmetry. apply Hz; assumption. }
  assert (Hck : 0 < c ^ k) by (apply pow_lt, Hc).
  pose proof (Hx (S k) i Hi) as HS.
  change (liter n d M V h x0 (S k)) with (lstep n d M V h (liter n d M V h x0 k)) in HS.
  rewrite (fval_lstep n d M V h lam phi _ i He), (Hx k i Hi) in HS.
  rewrite (hsum_ext n _ (fun j => c ^ k * (attn n d M (liter n d M V h x0 k) i j * fval d phi (z k j))))
    in HS by (intros j Hj; rewrite (Hx k j Hj); ring).
  rewrite hsum_scal in HS. unfold relax. fold c.
  apply (Rmult_eq_reg_l (c ^ S k)); [|apply Rgt_not_eq, pow_lt, Hc].
  rewrite <- HS. simpl. field. lra.
Qed.

Theorem functional_max_min : forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (phi : nat -> R)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  (1 <= n)%nat -> 0 <= h -> 0 <= lam -> left_eigen d V lam phi -> rescaled n d M V h x0 z ->
  forall k,
    tmax n (fun i => fval d phi (z (S k) i)) <= tmax n (fun i => fval d phi (z k i)) /\
    tmin n (fun i => fval d phi (z k i)) <= tmin n (fun i => fval d phi (z (S k) i)).
Proof.
  intros n d M V h lam phi x0 z Hn Hh Hl He Hz k.
  apply (relax_max_min n (h * lam) (attn n d M (liter n d M V h x0 k))).
  - exact Hn.
  - apply Rmult_le_pos; assumption.
  - apply attn_stochastic, Hn.
  - intros i Hi. apply (functional_step n d M V h lam phi x0 z); assumption.
Qed.

(** Over any number of steps: k ≤ l gives max at l ≤ max at k and min at k ≤ min at l. *)
Theorem functional_antitone : forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (phi : nat -> R)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  (1 <= n)%nat -> 0 <= h -> 0 <= lam -> left_eigen d V lam phi -> rescaled n d M V h x0 z ->
  forall k l, (k <= l)%nat ->
    tmax n (fun i => fval d phi (z l i)) <= tmax n (fun i => fval d phi (z k i)) /\
    tmin n (fun i => fval d phi (z k i)) <= tmin n (fun i => fval d phi (z l i)).
Proof.
  intros n d M V h lam phi x0 z Hn Hh Hl He Hz k l Hkl.
  induction Hkl as [|l Hkl IH]; [lra|].
  destruct (functional_max_min n d M V h lam phi x0 z Hn Hh Hl He Hz l). lra.
Qed.

(** ** The three claims *)

(** clusters/paranormal (V diagonal, ℱ spanned by coordinate c, V|_ℱ = λ): the ℱ-coordinate's
    max and min are monotone. *)
Theorem coordinate_max_min : forall (n d : nat) (M V : nat -> nat -> R) (h lam : R) (c : nat)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  (1 <= n)%nat -> 0 <= h -> 0 <= lam -> (c < d)%nat ->
  (forall b, (b < d)%nat -> V c b = lam * eye c b) -> rescaled n d M V h x0 z ->
  forall k,
    tmax n (fun i => z (S k) i c) <= tmax n (fun i => z k i c) /\
    tmin n (fun i => z k i c) <= tmin n (fun i => z (S k) i c).
Proof.
  intros n d M V h lam c x0 z Hn Hh Hl Hc HV Hz k.
  assert (Hf : forall v, fval d (eye c) v = v c) by (intros v; apply hsum_eye, Hc).
  assert (He : left_eigen d V lam (eye c)).
  { intros b Hb. rewrite hsum_eye by exact Hc. apply HV, Hb. }
  pose proof (functional_max_min n d M V h lam (eye c) x0 z Hn Hh Hl He Hz k) as H.
  rewrite !(tmax_ext n (fun i => fval d (eye c) (_ i)) (fun i => _ i c) Hn (fun j _ => Hf _)),
    !(tmin_ext n (fun i => fval d (eye c) (_ i)) (fun i => _ i c) Hn (fun j _ => Hf _)) in H.
  exact H.
Qed.

(** clusters/polytope (V = I): the support function h(u) = max_i ⟨u, z_i^k⟩ is nonincreasing
    for every direction u, and min_i ⟨u, z_i^k⟩ (= −h(−u)) nondecreasing. *)
Theorem support_max_min : forall (n d : nat) (M : nat -> nat -> R) (h : R) (u : nat -> R)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  (1 <= n)%nat -> 0 <= h -> rescaled n d M eye h x0 z ->
  forall k,
    tmax n (fun i => fval d u (z (S k) i)) <= tmax n (fun i => fval d u (z k i)) /\
    tmin n (fun i => fval d u (z k i)) <= tmin n (fun i => fval d u (z (S k) i)).
Proof.
  intros n d M h u x0 z Hn Hh Hz k.
  refine (functional_max_min n d M eye h 1 u x0 z Hn Hh ltac:(lra) _ Hz k).
  intros b Hb. rewrite hsum_eye_l by exact Hb. ring.
Qed.

(** clusters/polytope (V = I): z_i^{k+1} = Σ_j w_ij z_j^k with w_ij = (δ_ij + h P_ij^k)/(1 + h)
    ≥ 0, Σ_j w_ij = 1: every new token lies in the convex hull of the old ones, so
    Cx{z^{k+1}} ⊆ Cx{z^k} (`p:noninc`). *)
Theorem hull_step : forall (n d : nat) (M : nat -> nat -> R) (h : R)
    (x0 : nat -> nat -> R) (z : nat -> nat -> nat -> R),
  (1 <= n)%nat -> 0 <= h -> rescaled n d M eye h x0 z ->
  forall k i, (i < n)%nat ->
    exists w : nat -> R, (forall j, (j < n)%nat -> 0 <= w j) /\ hsum n w = 1 /\
      forall a, (a < d)%nat -> z (S k) i a = hsum n (fun j => w j * z k j a).
Proof.
  intros n d M h x0 z Hn Hh Hz k i Hi.
  set (P := attn n d M (liter n d M eye h x0 k)).
  destruct (relax_convex n (h * 1) P ltac:(lra) (attn_stochastic n d M _ Hn)) as [Hw Hs].
  exists (relax_weights (h * 1) P i). split; [intros j Hj; apply Hw; assumption|].
  split; [apply Hs, Hi|].
  intros a Ha.
  assert (He : left_eigen d eye 1 (eye a)).
  { intros b Hb. rewrite hsum_eye by exact Ha. ring. }
  assert (Hf : forall v, fval d (eye a) v = v a) by (intros v; apply hsum_eye, Ha).
  pose proof (functional_step n d M eye h 1 (eye a) x0 z Hh ltac:(lra) He Hz k i Hi) as H.
  rewrite Hf in H. rewrite H, relax_is_convex by (lra || exact Hi).
  apply hsum_ext. intros j Hj. rewrite Hf. reflexivity.
Qed.

Definition hull_monotone_lemmas :=
  (convex_step_bounds, convex_step_max_min, relax_convex, relax_max_min, attn_stochastic,
   functional_step, functional_max_min, functional_antitone, coordinate_max_min,
   support_max_min, hull_step).
Print Assumptions hull_monotone_lemmas.
