(** What opens a device: the openers of the drivers rig loads.

    A driver is a C plugin, librig-driver-NAME.so, found on
    [RIG_DRIVER_PATH] and then in rig's install folder; an opener names one
    of its devices. A driver written in OCaml ({!Driver}) runs copies and
    fills on memory the host addresses; README.md says what else the C
    driver interface would need of an OCaml one. *)

type plugin
(** A device of a C driver, as its opener's [make] returns it. *)

type 'a opener = private {
  name : string;  (** The name the device opens under: ["DRIVER:ARGS"]. *)
  make : unit -> ('a, string) result;
      (** Opens the device, or returns the one open under [name];
          [Error why] where it cannot be opened. [Rig.open_] calls it. *)
  device : 'a -> Rig_raw.device;
  on : Rig_raw.device -> ('a, string) result;
      (** Opens the device, or returns the one open under [name], on the
          machine of the device given, another machine's; [Rig.open_
          ~machine] calls it. *)
  host : string -> ('a, string) result;
      (** Opens the host of the machine named; [Rig.open_host] calls it.
          [Error] but for {!remote}'s. *)
}

val plugin : string -> plugin opener
(** [plugin "DRIVER:ARGS"] is the opener of the device that driver DRIVER
    opens from ARGS, such as ["memory:M"], ["vulkan:0"] or ["io:/tmp/f"].
    On another machine ([Rig.open_ ~machine]) it opens that machine's
    device of that name, ["CPU"] for its host. *)

val remote : ?driver:string -> ?key_file:string -> ?hang_ms:int -> string -> plugin opener
(** [remote ~key_file address] is the opener of the host of the machine
    whose [rig serve] listens at [address] (["HOST:PORT"]), through the
    driver of other machines [driver] (default ["remote"],
    librig-driver-remote.so), proving the secret in the file [key_file]. A
    request unanswered for [hang_ms] milliseconds (default 0: 30 s) loses
    the machine. Only [Rig.open_host ~machine] opens it: [Rig.open_] is
    [Error]. *)

type 'a io_opener = private {
  io_name : string;
  io_make : unit -> ('a, string) result;
  io_device : 'a -> Rig_raw.device;
}

val file : ?create:int -> ?read_only:bool -> ?durable:bool -> string -> plugin io_opener
(** [file path] opens the file [path] as an io device (rig's io library):
    [~create:n] creates it, or grows it, to [n] bytes; [~read_only] opens
    it for reading; [~durable] makes each write durable when it returns. *)

(** {1 Capabilities}

    A driver declares records under keys of its own, filled when a device
    opens ([rig_edge.h]'s [capability]), such as the remote driver's
    ["remote.machine"], the devices the machine's [rig serve] lists. A
    record is a C struct that the driver's header declares, and its
    functions, where it has some, are C functions that compiled code calls.
    {!Rig.capability} gives one; a key says how OCaml reads it. *)

type 'a capability = private {
  key : string;  (** The driver's key. *)
  read : nativeint -> 'a;  (** Makes the OCaml value from the record's address. *)
}

val capability : string -> (nativeint -> 'a) -> 'a capability
(** [capability key read] reads the record under [key] with [read], which
    gets the record's address (never [0n]): a program's own C stub that
    knows the driver's struct, for instance. *)

val c_record : string -> nativeint capability
(** [c_record key] gives the record's address as it is, for the program's
    C code. The record lives as long as its driver says (the remote
    driver's, until its host is closed). *)

(** {1 Drivers written in OCaml} *)

exception Fault of string
(** [Fault why], raised by a driver's function, is the driver's fault: the
    device is lost with [why] as the reason {!Rig.Lost} carries. Any other
    exception that escapes a driver's function is a fault too, with the
    exception's text. *)

(** A driver written in OCaml: devices whose memory is the driver's, in
    host memory that this process addresses, and whose work, copies and
    fills, the driver's [submit] runs before it returns, on one queue, as a
    memory device's is (rig's C driver interface, [<rig/edge.h>], through a
    driver table of the driver's own, [rig_device_open_driver]). Such a
    device runs on host ({!Rig.runs_on_host}), loads no code, and reaches
    and is reached as a memory device is.

    rig calls the functions on the thread that called it, inside its own
    locks and with signals blocked: a call of theirs to rig that may take a
    lock raises [Invalid_argument] (as from a finaliser), and they must not
    block for long. Only OCaml threads may call rig on such a device: a
    thread of a C library that calls rig, unknown to OCaml, makes the
    driver's functions fail with a fault. *)
module Driver : sig
  type bytes = (int, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

  (** A part of the work [submit] runs, in order. Each array is a view of
      the memory the part names, valid only while [submit] runs. *)
  type part =
    | Copy of { src : bytes; dst : bytes }  (** Of one length. *)
    | Fill of { dst : bytes; pattern : int; size : int }
        (** [dst] set to the [size] (1, 2 or 4) low bytes of [pattern],
            little-endian, repeated. *)

  type facts = {
    arch : string;  (** {!Rig.arch}: not empty. *)
    alignment : int;
        (** {!Rig.alignment}: a power of two, where every allocation starts
            ([Bigarray.Array1.create] gives 16); an allocation elsewhere is
            the driver's fault. *)
    budget : int;  (** The start of {!Rig.budget}. *)
    cache_bytes : int option;  (** {!Rig.cache_bytes}. *)
  }
  (** What a device states at open. rig checks them: breaking a rule makes
      the open raise [Invalid_argument]. *)

  type 'h t
  (** A driver whose devices' handles are ['h]. *)

  val make :
    name:string ->
    open_:(string -> ('h, string) result) ->
    facts:('h -> facts) ->
    allocate:('h -> int -> bytes option) ->
    submit:('h -> part array -> unit) ->
    stop:('h -> unit) ->
    'h t
  (** [make ~name ~open_ ~facts ~allocate ~submit ~stop] is the driver
      [name] (no [':'] or ['@']): [open_ args] opens the device of [args]
      ([Error why] where it cannot: {!Rig.open_}'s [Error]); [facts h] is
      read once at open; [allocate h n] gives [Some] array of [n]
      bytes or more of new memory, starting on the facts' alignment, which
      rig keeps reachable until it gives the memory back, or [None] where
      there is no room: rig reclaims and asks again, then raises
      {!Rig.Out_of_memory}; [submit h parts] runs the parts, in order, and
      returns once they are done; [stop h] ends the device, once, at its
      close. Takes no lock. *)

  val opener : 'h t -> string -> plugin opener
  (** [opener d args] opens [d]'s device ["NAME:ARGS"] ({!Rig.open_}); on
      another machine it is [Error]. *)
end
