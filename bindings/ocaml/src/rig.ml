(* Rig: devices and the order of the work they run, over librig-core.
   rig.mli documents each value; the stubs are rig_ml_*.c. *)

type t = Rig_raw.device

exception Lost of t * string
exception Out_of_memory of t * int

external init : unit -> unit = "rig_ml_init"
external device_key : t -> int = "rig_ml_device_key" [@@noalloc]
external device_wrap : int -> t = "rig_ml_device_wrap"
external device_host : unit -> t = "rig_ml_device_host"
external name : t -> string = "rig_ml_device_name"
external arch : t -> string = "rig_ml_device_arch"
external instruction_set : t -> string = "rig_ml_device_instruction_set"
external bus : t -> string option = "rig_ml_device_bus"
external runs_on_host : t -> bool = "rig_ml_device_runs_on_host" [@@noalloc]
external computes : t -> bool = "rig_ml_device_computes" [@@noalloc]
external alignment : t -> int = "rig_ml_device_alignment" [@@noalloc]
external cache_bytes : t -> int option = "rig_ml_device_cache_bytes"
external reaches : t -> t -> bool = "rig_ml_device_reaches" [@@noalloc]
external to_string : t -> string = "rig_ml_device_to_string"
external submitted : t -> int = "rig_ml_device_submitted" [@@noalloc]
external signaled : t -> int = "rig_ml_device_signaled"
external lost : t -> string option = "rig_ml_device_lost"
external budget : t -> int = "rig_ml_device_budget" [@@noalloc]
external allocated : t -> int = "rig_ml_device_allocated" [@@noalloc]
external set_budget : t -> int -> unit = "rig_ml_device_set_budget"
external free_cache : t -> unit = "rig_ml_device_free_cache"
external close_raw : t -> unit = "rig_ml_device_close"
external fail : string -> unit = "rig_ml_fail"
external failure : unit -> string option = "rig_ml_failure"
external version : unit -> string = "rig_ml_version"

(* One OCaml value per device, so that equal is ==: the table of the
   devices the program has seen, by their C pointer. *)
let devices : (int, t) Hashtbl.t = Hashtbl.create 16

(* The table's lock is C's (rig_ml_core.c), so that the library needs no
   threads library, whose Mutex ocamlfind links only with -thread. *)
external devices_lock : unit -> unit = "rig_ml_devices_lock"
external devices_unlock : unit -> unit = "rig_ml_devices_unlock" [@@noalloc]

let locked f =
  devices_lock ();
  Fun.protect ~finally:devices_unlock f

let intern (d : t) =
  let k = device_key d in
  locked (fun () ->
      match Hashtbl.find_opt devices k with
      | Some v -> v (* d's reference goes with d's finaliser *)
      | None ->
          Hashtbl.add devices k d;
          d)

let of_key k =
  match locked (fun () -> Hashtbl.find_opt devices k) with
  | Some d -> d
  | None -> intern (device_wrap k)

let host = intern (device_host ())

let () =
  Callback.register_exception "rig.lost" (Lost (host, ""));
  Callback.register_exception "rig.out_of_memory" (Out_of_memory (host, 0));
  Callback.register "rig.device_of_ptr" of_key;
  Callback.register "rig.collect" (fun () -> Gc.full_major ());
  Printexc.register_printer (function
    | Lost (d, why) -> Some (Printf.sprintf "%s lost: %s" (name d) why)
    | Out_of_memory (d, n) -> Some (Printf.sprintf "Rig.Out_of_memory (%s, %d)" (name d) n)
    | _ -> None);
  init ()

let equal (a : t) b = a == b
let pp ppf d = Format.pp_print_string ppf (to_string d)
let word = 4

(* ---- machines (rig_ml_machine.c) ---- *)
external machine : t -> string option = "rig_ml_device_machine"

let opened device = function Ok h -> Ok (intern (device h)) | Error _ as e -> e

let open_ ?machine:m (o : 'a Rig_edge.opener) =
  match m with
  | Some m when machine m <> None -> opened o.device (o.on m)
  | _ -> opened o.device (o.make ())

let open_host ~machine (o : 'a Rig_edge.opener) = opened o.device (o.host machine)

let open_io ?machine:m (o : 'a Rig_edge.io_opener) =
  match m with
  | Some m when machine m <> None ->
      Error (o.io_name ^ "@" ^ Option.get (machine m) ^ ": rig opens io devices of this machine only")
  | _ -> opened o.io_device (o.io_make ())

let memory_device n = open_ (Rig_edge.plugin ("memory:" ^ n))

(* ---- a device's machine and its driver's records (rig_ml_device.c) ---- *)
external host_of : t -> t = "rig_ml_device_host_of"
external capability_raw : t -> string -> nativeint = "rig_ml_device_capability"

let capability d (k : 'a Rig_edge.capability) =
  match capability_raw d k.key with 0n -> None | p -> Some (k.read p)

let close d =
  if d == host then invalid_arg "Rig.close: the host never closes";
  close_raw d

module Point = struct
  type device = Rig_raw.device

  type t = int

  external device_raw : t -> device option = "rig_ml_point_device"
  external reached : t -> bool = "rig_ml_point_reached" [@@noalloc]
  external wait : t -> unit = "rig_ml_point_wait"
  external to_string : t -> string = "rig_ml_point_to_string"

  let device = device_raw
  let value p = p land ((1 lsl 47) - 1)
  let pp ppf p = Format.pp_print_string ppf (to_string p)
end

type access = Read | Read_write

module Buffer = struct
  type device = Rig_raw.device

  type t
  type nonrec access = access = Read | Read_write
  type kind = Device | Pinned | Mapped

  external create_raw : device -> int -> kind -> t = "rig_ml_buffer_create"
  external view_raw : t -> int -> int -> access -> t = "rig_ml_buffer_view"
  external borrow : device -> t -> t = "rig_ml_buffer_borrow"
  external free : t -> unit = "rig_ml_buffer_free"
  external length : t -> int = "rig_ml_buffer_length" [@@noalloc]
  external device : t -> device = "rig_ml_buffer_device"
  external access : t -> access = "rig_ml_buffer_access" [@@noalloc]
  external kind : t -> kind = "rig_ml_buffer_kind" [@@noalloc]
  external is_dead : t -> bool = "rig_ml_buffer_dead" [@@noalloc]
  external overlaps : t -> t -> bool = "rig_ml_buffer_overlaps" [@@noalloc]
  external share_byte : t -> t -> bool = "rig_ml_buffer_share_byte" [@@noalloc]
  external host_address : t -> nativeint = "rig_ml_buffer_host_address"
  external wait : t -> access -> unit = "rig_ml_buffer_wait"
  external reached : t -> access -> bool = "rig_ml_buffer_reached" [@@noalloc]
  external copy_raw : t -> t -> unit = "rig_ml_buffer_copy"
  external submit_copy_raw : t -> t -> Point.t = "rig_ml_buffer_submit_copy"
  external fill_raw : t -> int -> int -> unit = "rig_ml_buffer_fill"
  external submit_fill_raw : t -> int -> int -> Point.t = "rig_ml_buffer_submit_fill"
  external blit_to_bytes : t -> int -> bytes -> int -> int -> unit = "rig_ml_buffer_blit_to_bytes"

  external blit_from_string : string -> int -> t -> int -> int -> unit
    = "rig_ml_buffer_blit_from_string"

  type bytes_array = (int, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

  external host_array : t -> access -> bytes_array = "rig_ml_buffer_host_array"
  external export_raw : t -> bytes_array * t = "rig_ml_buffer_export"

  let create ?(kind = Device) d n = create_raw d n kind

  let access_in f b a =
    let r = f (host_array b a) in
    ignore (Sys.opaque_identity b);
    r

  let read b f = access_in f b Read
  let write b f = access_in f b Read_write

  let export b =
    let a, token = export_raw b in
    Gc.finalise (fun _ -> ignore (Sys.opaque_identity token)) a;
    a

  let view ?access:a ?(off = 0) ?len b =
    let len = match len with Some l -> l | None -> length b - off in
    view_raw b off len (match a with Some a -> a | None -> access b)

  let copy ~src ~dst = copy_raw src dst
  let submit_copy ~src ~dst = submit_copy_raw src dst
  let fill ?(size = 1) b pattern = fill_raw b size pattern
  let submit_fill ?(size = 1) b pattern = submit_fill_raw b size pattern

  let blit_from_bytes src soff b boff len =
    blit_from_string (Bytes.unsafe_to_string src) soff b boff len

  (* ---- io devices' contents (rig_ml_io.c) ---- *)
  external of_io_raw : device -> int -> int -> t = "rig_ml_buffer_of_io"

  let of_io ?(off = 0) d len = of_io_raw d off len

  (* Buffers over OCaml's memory (rig_ml_host.c). *)
  external of_bigarray_raw : device -> ('a, 'b, 'c) Bigarray.Array1.t -> t
    = "rig_ml_buffer_of_bigarray"

  external of_string_raw : device -> string -> t = "rig_ml_buffer_of_string"
  external host_drain : unit -> unit = "rig_ml_host_drain"

  let (_ : Gc.alarm) = Gc.create_alarm host_drain
  let of_bigarray ?(device = host) a = of_bigarray_raw device a
  let of_string ?(device = host) s = of_string_raw device s
end

module Image = struct
  type device = Rig_raw.device

  type t
  type fn = { image : t; ptr : int }

  external load : device -> string -> (t, string) result = "rig_ml_image_load"
  external resolve_raw : t -> string -> int = "rig_ml_image_resolve"
  external device : t -> device = "rig_ml_image_device"
  external name_raw : int -> string = "rig_ml_function_name"
  external params_raw : int -> int = "rig_ml_function_params" [@@noalloc]
  external threads_raw : int -> int = "rig_ml_function_threads" [@@noalloc]
  external entry_raw : int -> int64 = "rig_ml_function_entry"

  let resolve image n = match resolve_raw image n with 0 -> None | ptr -> Some { image; ptr }
  let image f = f.image
  let name f = name_raw f.ptr
  let params f = params_raw f.ptr
  let threads f = threads_raw f.ptr
  let entry f = entry_raw f.ptr
end

module Submission = struct
  type device = Rig_raw.device

  type t

  (* rig_ml_submission.c reads these field by field. *)
  type ref = {
    kind : int; (* 0 read, 1 write, 2 read and write, 3 entry *)
    slot : int;
    at : int;
    unordered : bool;
    entry : int;
    fixed : Buffer.t option;
    fn : Image.fn option; (* keeps the entry's image reachable *)
  }

  type part =
    | Copy of { src : int; dst : int; unordered : bool }
    | Fill of { dst : int; pattern : int; size : int; unordered : bool }
    | Launch of { fn : int; refs : ref array; params : int; unordered : bool; image : Image.t }
    | Words of int array

  let slot_ref kind slot ~at = { kind; slot; at; unordered = false; entry = 0; fixed = None; fn = None }
  let read slot ~at = slot_ref 0 slot ~at
  let write slot ~at = slot_ref 1 slot ~at
  let read_write slot ~at = slot_ref 2 slot ~at

  let entry (f : Image.fn) ~at =
    { kind = 3; slot = 0; at; unordered = false; entry = f.ptr; fixed = None; fn = Some f }

  let fixed ?(access = Buffer.Read_write) b ~at =
    let kind = match access with Buffer.Read -> 0 | Buffer.Read_write -> 2 in
    { kind; slot = 0; at; unordered = false; entry = 0; fixed = Some b; fn = None }

  let unordered r = { r with unordered = true }
  let copy ~src ~dst = Copy { src; dst; unordered = false }
  let fill ?(size = 1) dst pattern = Fill { dst; pattern; size; unordered = false }

  let launch ?(refs = [||]) (f : Image.fn) ~params =
    Launch { fn = f.ptr; refs; params; unordered = false; image = f.image }

  let words w = Words w

  let unordered_part = function
    | Copy c -> Copy { c with unordered = true }
    | Fill f -> Fill { f with unordered = true }
    | Launch l -> Launch { l with unordered = true }
    | Words _ as w -> w

  external make_raw : device -> part array -> t = "rig_ml_submission_make"
  external keep_raw : t -> 'a -> unit = "rig_ml_submission_keep"

  let make ?keep d parts =
    let s = make_raw d parts in
    (match keep with Some v -> keep_raw s v | None -> ());
    s
  external slots : t -> int = "rig_ml_submission_slots" [@@noalloc]
  external block : t -> int -> int = "rig_ml_submission_block"
  external address : t -> Buffer.t -> int64 = "rig_ml_submission_address"
  external take_raw : t -> int = "rig_ml_submission_take"

  module Run = struct
    type submission = t
    type t = { sub : submission; run : int }

    external groups_raw : int -> int -> int -> int -> int -> unit = "rig_ml_run_groups"
    external threads_raw : int -> int -> int -> int -> int -> unit = "rig_ml_run_threads"
    external int64_raw : int -> int -> int -> int64 -> unit = "rig_ml_run_int64"
    external int_raw : int -> int -> int -> int -> unit = "rig_ml_run_int"
    external int32_raw : int -> int -> int -> int32 -> unit = "rig_ml_run_int32"
    external float_raw : int -> int -> int -> float -> unit = "rig_ml_run_float"
    external double_raw : int -> int -> int -> float -> unit = "rig_ml_run_double"
    external string_raw : int -> int -> int -> string -> unit = "rig_ml_run_string"
    external shared_raw : int -> int -> int -> unit = "rig_ml_run_shared"

    let submission r = r.sub
    let groups r k x y z = groups_raw r.run k x y z
    let threads r k x y z = threads_raw r.run k x y z
    let int64 r k off v = int64_raw r.run k off v
    let int r k off v = int_raw r.run k off v
    let int32 r k off v = int32_raw r.run k off v
    let float r k off v = float_raw r.run k off v
    let double r k off v = double_raw r.run k off v
    let string r k off s = string_raw r.run k off s
    let shared r k bytes = shared_raw r.run k bytes
  end

  let take s = { Run.sub = s; run = take_raw s }
end

external submit_raw : Point.t array -> Submission.t -> int -> Buffer.t array -> Point.t = "rig_ml_submit"

(* No default in the pattern: ?(waits = [||]) would make submit a function
   that returns a closure, allocated at each call. *)
let submit ?waits (r : Submission.Run.t) ~buffers =
  submit_raw (match waits with Some w -> w | None -> [||]) r.sub r.run buffers

module Claim = struct
  type t

  external with_ : Buffer.t -> (t -> 'a) -> 'a = "rig_ml_claim_with"
  external only : t -> bool = "rig_ml_claim_only"
  external consume : t -> Buffer.t = "rig_ml_claim_consume"
  external hold : Buffer.t -> t = "rig_ml_claim_hold"

  (* ---- read claims ---- *)
  external read_take : Buffer.t -> t = "rig_ml_claim_read"
  external read_end : t -> unit = "rig_ml_claim_read_end"

  let read b f =
    let c = read_take b in
    match f c with
    | r -> read_end c; r
    | exception e -> read_end c; raise e
end

module Local = struct
  type 'a key = int (* the C key, which lives for the process *)

  external new_key_raw : (t -> ('a, exn) result) -> int = "rig_ml_local_new_key"
  external get_raw : int -> t -> ('a, exn) result = "rig_ml_local_get"

  let new_key (init : t -> 'a) : 'a key = new_key_raw (fun d -> try Ok (init d) with e -> Error e)
  let get (k : 'a key) d : 'a = match get_raw k d with Ok v -> v | Error e -> raise e
end

(* ---- profiles (rig_ml_profile.c) ---- *)
module Profile = struct
  type kind = Copy | Fill | Launch | Words

  (* rig_ml_profile.c makes these field by field. *)
  type record = {
    device : string;
    queue : int;
    kind : kind;
    part : int;
    name : string;
    point : Point.t;
    start_ns : int;
    end_ns : int;
  }

  type t

  external start_raw : int -> unit = "rig_ml_profile_start"
  external stop : unit -> unit = "rig_ml_profile_stop"
  external active : unit -> bool = "rig_ml_profile_active"
  external take : unit -> t = "rig_ml_profile_take"
  external records : t -> record array = "rig_ml_profile_records"
  external dropped : t -> int = "rig_ml_profile_dropped"
  external chrome : t -> string = "rig_ml_profile_chrome"
  external save_chrome : t -> string -> unit = "rig_ml_profile_save_chrome"

  let start ?(records = 0) () = start_raw records
end

(* For Rig_remote, whose setups get the run rig_job_run took. *)
module Private = struct
  let run sub ptr = { Submission.Run.sub; run = ptr }
end
