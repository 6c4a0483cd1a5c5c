(* Rig_remote: jobs over <rig/job.h> (rig_ml_job.c). *)

type raw

external make_raw : unit -> raw = "rig_ml_job_make"
external add_raw : raw -> Rig.Submission.t -> Rig.Buffer.t array -> bool -> int = "rig_ml_job_add"
external add_copy_raw : raw -> Rig.Buffer.t -> Rig.Buffer.t -> int = "rig_ml_job_add_copy"
external run_raw : raw -> (int -> unit) array -> bool = "rig_ml_job_run"
external steps_raw : raw -> int = "rig_ml_job_steps" [@@noalloc]

(* The setups by step index, as the C callback finds them ([setup]'s ctx
   is the step's index); a step without one has [ignore]. *)
type t = { raw : raw; mutable setups : (int -> unit) array }

let make () = { raw = make_raw (); setups = [||] }
let steps j = steps_raw j.raw

(* The job's array grows with its steps, so that setups.(i) is step i's. *)
let set_setup j i f =
  if i >= Array.length j.setups then begin
    let a = Array.make (max 8 (2 * (i + 1))) ignore in
    Array.blit j.setups 0 a 0 (Array.length j.setups);
    j.setups <- a
  end;
  j.setups.(i) <- f

let add ?setup j s buffers =
  let i = add_raw j.raw s buffers (setup <> None) in
  (match setup with Some f -> set_setup j i (fun ptr -> f (Rig.Private.run s ptr)) | None -> ());
  i

let add_copy j ~src ~dst = add_copy_raw j.raw src dst

type step = Reached of Rig.Point.t option | Lost of string | Pending

external step_raw : raw -> int -> step = "rig_ml_job_step"

let step j i = step_raw j.raw i

let run j =
  if run_raw j.raw j.setups then Ok ()
  else
    Error
      (List.filter_map
         (fun i -> match step j i with Lost why -> Some (i, why) | _ -> None)
         (List.init (steps j) Fun.id))
