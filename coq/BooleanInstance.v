(** * The Boolean limit of one certified instance (clusters/boolean-limit, issue 39).

    [BooleanLimit.v] proves, once, that the hypotheses at a finite step K —
    threshold (T) for A, strict order of y^K, and every token but one outside
    [−A, A] — give the limit of P^k.  This file applies it to a [layer] datum of
    a certificate: the y-layer of the claim, d = 1, Q = K = V = [[1]] and Δt = h
    ([unit_layer]).  Its coordinates are the map [yiter] of BooleanLimit.v
    ([coord_yiter], from the bridge [layer_iter_unit]), so the hypotheses at K
    can be stated on the datum ([hyp_form], a reflected formula over
    [layer_coord] that a generated file proves by Attncheck.v's interval
    evaluation, [xcheck_sound]) and the theorems below give the limit of the
    instance's own sequence P^k = [yattn n (yiter n h y0 k)] (the shift by K is
    [yiter_plus] and [un_cv_shift]):

    - [instance_rows]: rows of tokens below −A at K converge to e_1, rows of
      tokens above A to e_n (doubly exponentially, [boolean_limit_rate]);
    - [instance_structure]: with one token m in [−A, A] at K, every entrywise
      limit P* has rows e_1 (i < m), e_n (i > m) and P*_m, columns other than 1
      and n vanishing outside row m: rank ≤ 3;
    - [instance_escaped]: with every token outside [−A, A] at K, P^k converges,
      rows e_1 and e_n only;
    - [instance_symmetric]: for odd n = 2c + 1 and initial data mirror-symmetric
      ([mirror_ok], checked on the exact data), P^k converges to rows e_1
      (i < c), (1/n, …, 1/n) (i = c), e_n (i > c): rank 3.

    Indices from 0 (the paper's token 1 is 0, token n is n − 1). *)

From Coq Require Import ZArith QArith Qreals Reals Lra Lia List.
From Attncheck Require Import Attncheck BooleanLimit.
Import ListNotations.
Local Open Scope R_scope.

(** ** The y-layer as a datum *)

Definition unit_layer (L : layerQ) : bool :=
  match lq_q L, lq_k L, lq_v L with
  | [[q]], [[k]], [[v]] => Qeq_bool q 1 && Qeq_bool k 1 && Qeq_bool v 1
  | _, _, _ => false
  end && forallb (fun X => forallb (fun x => Nat.eqb (length x) 1) X) (lq_runs L).

(** n, the tokens of run r, and y^0 as a function of the token. *)
Definition ntok (L : layerQ) (r : nat) : nat := length (nth r (lq_runs L) []).
Definition yinit (L : layerQ) (r : nat) (i : nat) : R := Q2R (nth 0 (nth i (nth r (lq_runs L) []) []) 0%Q).

Lemma Q2R_one_of : forall q, Qeq_bool q 1 = true -> Q2R q = 1.
Proof.
  intros q H. apply Qeq_bool_iff in H. apply Qeq_eqR in H. rewrite H. unfold Q2R. simpl. field.
Qed.

Lemma unit_layer_mats : forall L, unit_layer L = true ->
  l_q (layer_of_Q L) = [[1]] /\ l_k (layer_of_Q L) = [[1]] /\ l_v (layer_of_Q L) = [[1]].
Proof.
  intros L H. unfold unit_layer in H. apply andb_prop in H as [H _].
  destruct (lq_q L) as [|[|q [|]] [|]] eqn:Eq; try discriminate;
  destruct (lq_k L) as [|[|k [|]] [|]] eqn:Ek; try discriminate;
  destruct (lq_v L) as [|[|v [|]] [|]] eqn:Ev; try discriminate.
  apply andb_prop in H as [H Hv]. apply andb_prop in H as [Hq Hk].
  simpl. rewrite Eq, Ek, Ev. unfold matR. simpl.
  rewrite (Q2R_one_of q Hq), (Q2R_one_of k Hk), (Q2R_one_of v Hv). auto.
Qed.

Lemma run_tokens : forall (X : list (list Q)), forallb (fun x => Nat.eqb (length x) 1) X = true ->
  matR X = map (fun b => [b]) (yvals (length X) (fun i => Q2R (nth 0 (nth i X []) 0%Q))).
Proof.
  intros X H. unfold yvals, matR. rewrite map_map.
  induction X as [|x X IH]; [reflexivity|].
  simpl in H. apply andb_prop in H as [Hx H].
  apply Nat.eqb_eq in Hx. destruct x as [|q [|]]; try discriminate.
  simpl. f_equal. rewrite IH by exact H. rewrite <- seq_shift, map_map. reflexivity.
Qed.

Lemma nth_map_any : forall A B (f : A -> B) l i (d : A) (d' : B), (i < length l)%nat ->
  nth i (map f l) d' = f (nth i l d).
Proof.
  intros A B f l i d d' Hi. rewrite (nth_indep _ d' (f d)) by (rewrite map_length; exact Hi).
  apply map_nth.
Qed.

Theorem coord_yiter : forall L r k i, unit_layer L = true -> (i < ntok L r)%nat ->
  layer_coord (layer_of_Q L) r k i 0 = yiter (ntok L r) (Q2R (lq_dt L)) (yinit L r) k i.
Proof.
  intros L r k i H Hi.
  destruct (unit_layer_mats L H) as [Hq [Hk Hv]].
  assert (Hruns : forallb (fun X => forallb (fun x => Nat.eqb (length x) 1) X) (lq_runs L) = true)
    by (unfold unit_layer in H; apply andb_prop in H as [_ H]; exact H).
  unfold ntok in *. set (X := nth r (lq_runs L) []) in *.
  assert (HX : forallb (fun x => Nat.eqb (length x) 1) X = true).
  { unfold X. destruct (Nat.lt_ge_cases r (length (lq_runs L))) as [Hr|Hr].
    - rewrite forallb_forall in Hruns. apply Hruns, nth_In, Hr.
    - rewrite nth_overflow by exact Hr. reflexivity. }
  unfold layer_coord, layer_iter. rewrite Hq, Hk, Hv.
  assert (Hl : l_dt (layer_of_Q L) = Q2R (lq_dt L)) by reflexivity. rewrite Hl.
  assert (Hr0 : nth r (l_runs (layer_of_Q L)) [] = matR X).
  { simpl. unfold X. destruct (Nat.lt_ge_cases r (length (lq_runs L))) as [Hr|Hr].
    - rewrite (nth_indep _ [] (matR [])) by (rewrite map_length; exact Hr). apply map_nth.
    - rewrite !nth_overflow by (rewrite ?map_length; exact Hr). reflexivity. }
  rewrite Hr0, (run_tokens X HX).
  rewrite layer_iter_unit by lia.
  rewrite (nth_map_any _ _ (fun b : R => [b]) _ i 0 []) by (rewrite tolist_length; exact Hi).
  rewrite nth_tolist by exact Hi. reflexivity.
Qed.

(** ** Convergence is blind to a shift of the index *)
Lemma un_cv_shift : forall (u : nat -> R) l K, Un_cv (fun k => u (k + K)%nat) l -> Un_cv u l.
Proof.
  intros u l K H eps He. destruct (H eps He) as [N HN]. exists (N + K)%nat. intros k Hk.
  replace k with ((k - K) + K)%nat by lia. apply HN. lia.
Qed.
Lemma un_cv_unshift : forall (u : nat -> R) l K, Un_cv u l -> Un_cv (fun k => u (k + K)%nat) l.
Proof.
  intros u l K H eps He. destruct (H eps He) as [N HN]. exists N. intros k Hk. apply HN. lia.
Qed.

(** ** The hypotheses at K, as a reflected formula over the datum

    hyp_form n a b r K p q, with A = p / q: y^K strictly increasing, y_i^K < −A
    for i < a, A < y_i^K for b ≤ i < n (b = a: every token escaped; b = a + 1:
    token a is the one in between). *)
Definition coordX (r K : Z) (i : zexp) : xterm := XAtom (ACoord 0 (ZC r) (ZC K) i (ZC 0)).
Definition hyp_form (n a b : nat) (r K p : Z) (q : positive) : xform :=
  XAnd (XAll 0 (Z.of_nat n - 2) (XLt (coordX r K (ZV 0)) (coordX r K (ZAdd (ZV 0) (ZC 1)))))
    (XAnd (XAll 0 (Z.of_nat a - 1) (XLt (coordX r K (ZV 0)) (XNeg (XFrac p q))))
       (XAll (Z.of_nat b) (Z.of_nat n - 1) (XLt (XFrac p q) (coordX r K (ZV 0))))).

Lemma hyp_form_spec : forall L n a b r K p q, (0 <= r)%Z -> (0 <= K)%Z ->
  xfden [L] [] (hyp_form n a b r K p q) ->
  let y := fun i => layer_coord (layer_of_Q L) (Z.to_nat r) (Z.to_nat K) i 0 in
  (forall i, (S i < n)%nat -> y i < y (S i)) /\
  (forall i, (i < a)%nat -> y i < - (IZR p / IZR (Zpos q))) /\
  (forall i, (b <= i < n)%nat -> IZR p / IZR (Zpos q) < y i).
Proof.
  intros L n a b r K p q Hr HK H y. simpl in H. destruct H as [H1 [H2 H3]].
  split; [|split].
  - intros i Hi. specialize (H1 (Z.of_nat i) ltac:(lia)). simpl in H1.
    unfold y. replace (Z.to_nat (Z.of_nat i + 1)) with (S i) in H1 by lia.
    rewrite Nat2Z.id in H1. exact H1.
  - intros i Hi. specialize (H2 (Z.of_nat i) ltac:(lia)). simpl in H2. rewrite Nat2Z.id in H2. exact H2.
  - intros i Hi. specialize (H3 (Z.of_nat i) ltac:(lia)). simpl in H3. rewrite Nat2Z.id in H3. exact H3.
Qed.

Lemma un_cv_ext : forall (u v : nat -> R) l, (forall k, u k = v k) -> Un_cv u l -> Un_cv v l.
Proof. intros u v l H Hu eps He. destruct (Hu eps He) as [N HN]. exists N. intros k Hk. rewrite <- H. apply HN, Hk. Qed.

(** ** The limit of the instance *)
Section Instance.
Variables (L : layerQ) (r K : nat) (A : R) (a b : nat).
Let n := ntok L r.
Let h := Q2R (lq_dt L).
Let y0 := yinit L r.
Let yK := yiter n h y0 K.

Hypothesis Hunit : unit_layer L = true.
Hypothesis Hn : (2 <= n)%nat.
Hypothesis Hab : (a <= b <= n)%nat.
Hypothesis Hh : 0 < h.
Hypothesis HA : 0 < A.
Hypothesis HT : 2 * (IZR (Z.of_nat n) - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1).
Hypothesis Hord : forall i, (S i < n)%nat ->
  layer_coord (layer_of_Q L) r K i 0 < layer_coord (layer_of_Q L) r K (S i) 0.
Hypothesis Hlow : forall i, (i < a)%nat -> layer_coord (layer_of_Q L) r K i 0 < - A.
Hypothesis Hhigh : forall i, (b <= i < n)%nat -> A < layer_coord (layer_of_Q L) r K i 0.

Let HT' : 2 * (INR n - 1) <= A ^ 2 * exp (A ^ 2 / 2 + 1).
Proof. rewrite INR_IZR_INZ. exact HT. Qed.

Let yK_coord : forall i, (i < n)%nat -> yK i = layer_coord (layer_of_Q L) r K i 0.
Proof. intros i Hi. unfold yK, n, h, y0. rewrite coord_yiter; [reflexivity | exact Hunit | exact Hi]. Qed.

Let ordK : forall i, (S i < n)%nat -> yK i < yK (S i).
Proof. intros i Hi. rewrite !yK_coord by lia. apply Hord, Hi. Qed.

Let lowK : forall i, (i < a)%nat -> yK i < - A.
Proof. intros i Hi. rewrite yK_coord by lia. apply Hlow, Hi. Qed.

Let highK : forall i, (b <= i < n)%nat -> A < yK i.
Proof. intros i Hi. rewrite yK_coord by lia. apply Hhigh, Hi. Qed.

Let shifted : forall i j k, yattn n (yiter n h yK k) i j = yattn n (yiter n h y0 (k + K)) i j.
Proof. intros i j k. unfold yK. rewrite yiter_plus. reflexivity. Qed.

Let back : forall i j l, Un_cv (fun k => yattn n (yiter n h yK k) i j) l ->
  Un_cv (fun k => yattn n (yiter n h y0 k) i j) l.
Proof.
  intros i j l H. apply (un_cv_shift _ _ K).
  exact (un_cv_ext _ (fun k => yattn n (yiter n h y0 (k + K)) i j) _ (shifted i j) H).
Qed.

Let forth : forall i j l, Un_cv (fun k => yattn n (yiter n h y0 k) i j) l ->
  Un_cv (fun k => yattn n (yiter n h yK k) i j) l.
Proof.
  intros i j l H. apply (un_cv_ext (fun k => yattn n (yiter n h y0 (k + K)) i j)).
  - intros k. symmetry. apply shifted.
  - exact (un_cv_unshift (fun k => yattn n (yiter n h y0 k) i j) l K H).
Qed.

(** Rows of tokens below −A at K converge to e_1, above A to e_n. *)
Theorem instance_rows :
  (forall i j, (i < a)%nat -> (j < n)%nat ->
     Un_cv (fun k => yattn n (yiter n h y0 k) i j) (if Nat.eqb j 0 then 1 else 0)) /\
  (forall i j, (b <= i < n)%nat -> (j < n)%nat ->
     Un_cv (fun k => yattn n (yiter n h y0 k) i j) (if Nat.eqb j (n - 1) then 1 else 0)).
Proof.
  split.
  - intros i j Hi Hj. apply back.
    apply (proj2 (boolean_limit_rows n h A yK Hn Hh HA HT' ordK i j ltac:(lia) Hj)), lowK, Hi.
  - intros i j Hi Hj. apply back.
    apply (proj1 (boolean_limit_rows n h A yK Hn Hh HA HT' ordK i j ltac:(lia) Hj)), highK, Hi.
Qed.

Let outside : forall m, b = S m -> a = m -> forall i, (i < n)%nat -> i <> m -> yK i < - A \/ A < yK i.
Proof.
  intros m Hb Ha i Hi Him. destruct (Nat.lt_ge_cases i a) as [H|H].
  - left. apply lowK, H.
  - right. apply highK. lia.
Qed.

(** One token m = a between: every entrywise limit P* of P^k has rows e_1 (i < m),
    e_n (i > m) and P*_m; outside row m, columns other than 1 and n vanish. *)
Theorem instance_structure : b = S a -> forall Pstar : nat -> nat -> R,
  (forall i j, (i < n)%nat -> (j < n)%nat -> Un_cv (fun k => yattn n (yiter n h y0 k) i j) (Pstar i j)) ->
  (forall i j, (i < a)%nat -> (j < n)%nat -> Pstar i j = if Nat.eqb j 0 then 1 else 0) /\
  (forall i j, (a < i < n)%nat -> (j < n)%nat -> Pstar i j = if Nat.eqb j (n - 1) then 1 else 0) /\
  (forall i j, (i < n)%nat -> (j < n)%nat -> i <> a -> j <> 0%nat -> j <> (n - 1)%nat -> Pstar i j = 0).
Proof.
  intros Hb Pstar Hcv.
  destruct (boolean_limit_structure n h A yK a Pstar Hn Hh HA HT' ordK
              (outside a Hb eq_refl) (fun i j Hi Hj => forth i j _ (Hcv i j Hi Hj)))
    as [Hdown [Hup [_ [Hcol _]]]].
  split; [|split].
  - intros i j Hi Hj. apply Hdown; [lia | exact Hj | apply lowK, Hi].
  - intros i j Hi Hj. apply Hup; [lia | exact Hj | apply highK; lia].
  - exact Hcol.
Qed.

(** Every token outside [−A, A] at K: P^k converges, to rows e_1 (i < a) and e_n. *)
Theorem instance_escaped : b = a ->
  (forall i j, (i < a)%nat -> (j < n)%nat ->
     Un_cv (fun k => yattn n (yiter n h y0 k) i j) (if Nat.eqb j 0 then 1 else 0)) /\
  (forall i j, (a <= i < n)%nat -> (j < n)%nat ->
     Un_cv (fun k => yattn n (yiter n h y0 k) i j) (if Nat.eqb j (n - 1) then 1 else 0)).
Proof.
  intros Hb. destruct instance_rows as [H1 H2].
  split; [exact H1 | intros i j Hi Hj; apply H2; [lia | exact Hj]].
Qed.

(** The mirror-symmetric witness: n = 2c + 1, y^0_{n−1−j} = −y^0_j, one token between
    (c = a): P^k converges to rows e_1 (i < c), (1/n, …, 1/n) (i = c), e_n (i > c). *)
Theorem instance_symmetric : forall c, n = (2 * c + 1)%nat -> (1 <= c)%nat -> a = c -> b = S c ->
  (forall j, (j < n)%nat -> y0 (n - 1 - j)%nat = - y0 j) ->
  forall i j, (i < n)%nat -> (j < n)%nat ->
    Un_cv (fun k => yattn n (yiter n h y0 k) i j)
      (if Nat.ltb i c then (if Nat.eqb j 0 then 1 else 0)
       else if Nat.eqb i c then / INR n
       else (if Nat.eqb j (n - 1) then 1 else 0)).
Proof.
  intros c Hnc Hc Ha Hb Hs i j Hi Hj. apply back.
  assert (HsK : forall j, (j < n)%nat -> yK (n - 1 - j)%nat = - yK j).
  { intros l Hl. unfold yK. apply yiter_mirror; [exact Hs | exact Hl]. }
  assert (Hmid : forall i, (i < n)%nat -> i <> c -> yK i < - A \/ A < yK i).
  { intros l Hl Hlc. apply (outside c); [congruence | exact Ha | exact Hl | exact Hlc]. }
  apply (proj2 (boolean_limit_symmetric n c h A yK Hnc Hc Hh HA HT' ordK HsK Hmid) i j Hi Hj).
Qed.

End Instance.

(** The mirror symmetry of run r's exact data (y^0_{n−1−j} = −y^0_j), decided. *)
Definition mirror_ok (L : layerQ) (r : nat) : bool :=
  let X := nth r (lq_runs L) [] in
  let n := length X in
  forallb (fun j => Qeq_bool (nth 0 (nth (n - 1 - j) X []) 0%Q) (- nth 0 (nth j X []) 0%Q)) (seq 0 n).

Lemma mirror_ok_spec : forall L r, mirror_ok L r = true ->
  forall j, (j < ntok L r)%nat -> yinit L r (ntok L r - 1 - j)%nat = - yinit L r j.
Proof.
  intros L r H j Hj. unfold mirror_ok in H. cbv zeta in H. rewrite forallb_forall in H.
  unfold ntok in Hj.
  assert (Hin : In j (seq 0 (length (nth r (lq_runs L) [])))) by (apply in_seq; lia).
  specialize (H j Hin).
  apply Qeq_bool_iff, Qeq_eqR in H. rewrite Q2R_opp in H. exact H.
Qed.

(** What is proven, and on what. *)
Definition boolean_instance_lemmas :=
  (coord_yiter, hyp_form_spec, instance_rows, instance_structure, instance_escaped, instance_symmetric,
   mirror_ok_spec).
Print Assumptions boolean_instance_lemmas.
