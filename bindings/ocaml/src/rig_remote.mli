(** Jobs: work on the devices of several machines, run in order, that says
    afterwards which of its steps a lost machine took with it
    ([<rig/job.h>]; the devices are those {!Rig.open_host} and
    [Rig.open_ ~machine] open, and this machine's).

    A job's steps are submissions, each with its buffers, and copies
    between buffers of two machines, in the order they were added. Steps
    follow each other through their memory as every submit does (a step
    that reads a buffer follows the step that wrote it, on whichever
    machine); a job adds no wait of its own.

    {b How a job fails.} When a machine is lost mid-job, {!run} goes on:
    a step whose submission's device or one of whose buffers' devices is
    lost by its turn is lost and not submitted, as is a step that uses
    memory a lost step writes; a step whose submit or wait meets the loss
    is lost; every other step runs. {!run} then answers [Error] with the
    lost steps, and {!step} says of each step whether its results are still
    readable: a reached step whose written buffers were on the lost machine
    is lost too. A retry is a new job, which the program makes on devices
    still open; rig moves no work between machines on its own.

    A job is used by one thread at a time: an {!add} or {!run} while
    another thread's is under way raises [Invalid_argument]. *)

type t

val make : unit -> t
(** An empty job. Takes no lock. *)

val add : ?setup:(Rig.Submission.Run.t -> unit) -> t -> Rig.Submission.t -> Rig.Buffer.t array -> int
(** [add ~setup j s buffers] adds a step that submits [s] with [buffers]
    as its slots, and returns its index (steps count from 0). The job holds
    [s] and the buffers until it is collected. [setup], where given, sets
    the launch blocks of the step's run ({!Rig.Submission.Run.groups},
    ...) each time the step is submitted, just before; the run is the
    step's only while [setup] runs. Raises [Invalid_argument] for a count
    of buffers other than [s]'s slots or a dead buffer. Takes no lock. *)

val add_copy : t -> src:Rig.Buffer.t -> dst:Rig.Buffer.t -> int
(** [add_copy j ~src ~dst] adds a step that copies [src] into [dst] as
    {!Rig.Buffer.submit_copy} does, between two machines through this
    host's staging, and returns its index. Takes no lock. *)

val run : t -> (unit, (int * string) list) result
(** [run j] submits every step not yet submitted, in order, then waits for
    each one's point. [Ok ()] once every step is reached; [Error lost],
    the lost steps with their reasons (which name the machine and the
    cause, ["m2 lost: ..."]), where a machine was lost: the other steps
    ran. A setup's exception stops the run there and is raised again, as
    are [Invalid_argument], {!Rig.Out_of_memory} and [Sys.Break]; a later
    [run] goes on from the steps not yet submitted or reached. A lost step
    stays lost: [run] runs nothing new for it. Blocks, releasing the
    runtime lock; may lock. *)

type step =
  | Reached of Rig.Point.t option
      (** Its point is reached and every buffer it writes is still
          readable; [None] for a step that took no point. *)
  | Lost of string  (** Lost in {!run}, or its results went with a machine since. *)
  | Pending  (** Not yet reached: {!run} has not reached it. *)

val step : t -> int -> step
(** [step j i] is step [i]'s state. Raises [Invalid_argument] for no such
    step. Takes no lock. *)

val steps : t -> int (** The number of steps of [j]. *)
